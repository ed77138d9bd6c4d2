package ssh_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"mnemo/contract"
)

var osc52 = regexp.MustCompile("\x1b\\]52;c;([A-Za-z0-9+/=]*)(?:\x07|\x1b\\\\)")

// TestExportOverSSHCopiesToTheClientAndWritesNoFile is defect 3 of issue 12:
// `e` in the detail view of an SSH session wrote mnemo-<id>.json into the
// server's working directory (for a reader too) and showed the server's path.
// Over SSH it now copies the record's JSON to the client's clipboard over
// OSC52, as `Y` copies text, and the server's filesystem is left alone.
func TestExportOverSSHCopiesToTheClientAndWritesNoFile(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	aliceID, bobID := newIdentity(t), newIdentity(t)
	addr := startScoped(t, aliceID, bobID)
	bob := openTUI(t, addr, bobID, "bob", foreign(aliceRecords, strayRecords))
	bob.see(t, "bob@shared", "2 records")
	bob.press(t, "\t", "\r")
	bob.see(t, "copy JSON")
	bob.press(t, "e")
	screen := waitScreen(bob, []string{"copied record"})
	bob.check(t, screen, "as JSON")
	if strings.Contains(bob.out.String(), "exported to") || strings.Contains(bob.out.String(), cwd) {
		t.Fatalf("the session was told of a server path:\n%s", screen)
	}
	var payload []byte
	deadline := time.Now().Add(5 * time.Second)
	for payload == nil && time.Now().Before(deadline) {
		for _, m := range osc52.FindAllStringSubmatch(bob.out.String(), -1) {
			data, err := base64.StdEncoding.DecodeString(m[1])
			if err == nil && strings.Contains(string(data), `"item"`) {
				payload = data
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	var rec contract.Record
	if err := json.Unmarshal(payload, &rec); err != nil || rec.Item == nil || rec.Item.Meta.Namespace.String() != "user:bob" {
		t.Fatalf("the clipboard got %q (%v)", payload, err)
	}
	entries, err := os.ReadDir(cwd)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("the session wrote %s into the server's working directory", entries[0].Name())
	}
}
