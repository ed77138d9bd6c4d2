package storeopen

import (
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/contract"
	"mnemo/engine/bolt"
	"mnemo/engine/memory"
	"mnemo/server/httpapi"
)

func TestLocalOpensAndReportsTheStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(ctx, "", dir, Options{TakeoverWait: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if s.Label != dir || s.Dir != dir {
		t.Errorf("label %q, dir %q, want %q", s.Label, s.Dir, dir)
	}
	if _, err := contract.Store(ctx, s.Engine, contract.StoreItem{Type: contract.KindDocument,
		Body: contract.DocumentBody{Text: "kept"}, Meta: contract.MemoryMeta{Source: contract.SourceRef{Kind: contract.SourceAgent}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Records(ctx); err != nil || n != 1 || !s.CanCount() {
		t.Errorf("records = %d, %v (can count %v), want 1", n, err, s.CanCount())
	}
	if got := s.HeldBy(ctx); got != os.Getpid() {
		t.Errorf("held by %d, want this process %d", got, os.Getpid())
	}
	if st := s.IndexStatus(); st.State == "" || st.State == "unknown" {
		t.Errorf("index status %+v", st)
	}
}

func TestLocalMustExistCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "none")
	_, err := Local(context.Background(), dir, Options{MustExist: true})
	if err == nil {
		t.Fatal("opened a store that does not exist")
	}
	if _, serr := os.Stat(dir); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("a read-only open created %s (%v)", dir, serr)
	}
}

func TestLocationAdjustsTheHeldStoreAndExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	adjusted := false
	s, err := Location(context.Background(), "~/st", Options{Adjust: func(o *bolt.Options) { adjusted = true }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if want := filepath.Join(home, "st"); s.Dir != want || !adjusted {
		t.Errorf("dir %q (adjusted %v), want %q adjusted", s.Dir, adjusted, want)
	}
}

func TestRemoteNamesTheTokenAndHidesThePassword(t *testing.T) {
	srv := httptest.NewServer(httpapi.New(memory.New(), httpapi.Options{OwnerToken: "right"}))
	defer srv.Close()
	withPassword := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1)
	tests := []struct {
		name, token, want string
	}{
		{"no token", "", "needs a token: set MNEMO_TOKEN"},
		{"wrong token", "wrong", "does not know the token in MNEMO_TOKEN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Remote(context.Background(), withPassword, Options{Token: tt.token})
			if !errors.Is(err, contract.ErrUnauthorized) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want unauthorized saying %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "alice:xxxxx@") {
				t.Errorf("error does not hide the password: %v", err)
			}
		})
	}
	s, err := Open(context.Background(), srv.URL, "/not/opened", Options{Token: "right"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Label != srv.URL || s.Dir != "" || s.CanCount() {
		t.Errorf("remote store %+v", s)
	}
	if n, err := s.Records(context.Background()); err != nil || n != 0 {
		t.Errorf("records = %d, %v", n, err)
	}
}

func TestTokenHintLeavesOtherErrors(t *testing.T) {
	other := contract.NotFound("gone")
	if got := TokenHint(other, "http://x", ""); got != other {
		t.Errorf("TokenHint changed %v into %v", other, got)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:7077":            "http://127.0.0.1:7077",
		"https://alice:s3cret@mnemo.local": "https://alice:xxxxx@mnemo.local",
		"unix:///run/mnemo.sock":           "unix:///run/mnemo.sock",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpandHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for in, want := range map[string]string{
		"~": home, "~/a/b": filepath.Join(home, "a/b"), "/abs": "/abs", "rel/~": "rel/~", "~other": "~other",
	} {
		if got := ExpandHome(in); got != want {
			t.Errorf("ExpandHome(%q) = %q, want %q", in, got, want)
		}
	}
}
