package local

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
)

// A process attached to the store backs it up through the holder: the copy
// streams over the socket and restores to the same records; the exact
// restore and the per-namespace counts go through the socket too.
func TestBackupAndRestoreThroughTheHolder(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	holder := open(t, dir)
	attached := open(t, dir)
	if attached.Role() != Attached {
		t.Fatalf("role %s; want attached", attached.Role())
	}
	sandboxed := learning("in the digest's sandbox")
	sandboxed.Meta.Namespace = contract.MustNamespace("team:acme/service:digest")
	if _, err := contract.StoreMany(ctx, holder, []contract.StoreItem{learning("one"), learning("two"), sandboxed}); err != nil {
		t.Fatal(err)
	}
	var fromHolder, fromAttached bytes.Buffer
	if _, err := holder.Backup(ctx, &fromHolder); err != nil {
		t.Fatal(err)
	}
	info, err := attached.Backup(ctx, &fromAttached)
	if err != nil {
		t.Fatal(err)
	}
	if info.Records != 3 || info.Bytes != int64(fromAttached.Len()) || fromAttached.Len() == 0 {
		t.Fatalf("backup through the socket: %+v, %d bytes", info, fromAttached.Len())
	}
	rep, err := bolt.RestoreBackup(ctx, &fromAttached, filepath.Join(t.TempDir(), "restored"), bolt.Options{})
	if err != nil || rep.Backup.Records != 3 || !rep.Check.Consistent {
		t.Fatalf("restore of the copy taken through the socket: %+v %v", rep, err)
	}
	counts, err := attached.NamespaceCounts(ctx)
	if err != nil || counts["team:acme"] != 2 || counts["team:acme/service:digest"] != 1 {
		t.Fatalf("namespace counts through the socket: %v %v", counts, err)
	}
	recs, err := attached.GetRecords(ctx, contract.GetRequest{IDs: []string{learning("one").Fingerprint()}})
	if err != nil || len(recs) != 1 {
		t.Fatalf("get: %v %v", recs, err)
	}
	if _, err := attached.Forget(ctx, contract.ForgetIDs(recs[0].ID)); err != nil {
		t.Fatal(err)
	}
	if n, err := contract.Restore(ctx, attached, recs); err != nil || n != 1 {
		t.Fatalf("restore through the socket: %d %v", n, err)
	}
	back, err := holder.GetRecords(ctx, contract.GetRequest{IDs: []string{recs[0].ID}})
	if err != nil || len(back) != 1 || !back[0].CreatedAt.Equal(recs[0].CreatedAt) || !back[0].UpdatedAt.Equal(recs[0].UpdatedAt) {
		t.Fatalf("the record restored through the socket: %+v; want %+v", back, recs)
	}
}
