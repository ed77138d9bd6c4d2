package curate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mnemo/contract"
)

func TestDismissed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "dismissed.json")
	d, err := LoadDismissed(path, "/stores/a")
	if err != nil {
		t.Fatalf("a missing file: %v", err)
	}
	text := "The worker runs as a systemd unit with Restart=on-failure and a RestartSec of five seconds."
	pair := Find([]contract.Record{rec("x", contract.KindDocument, text), rec("y", contract.KindDocument, text)}, DefaultConfig())
	if len(pair) != 1 || d.Hidden(pair[0]) {
		t.Fatalf("clusters %v: want one, not hidden", pair)
	}
	if err := d.Dismiss(pair[0]); err != nil {
		t.Fatal(err)
	}
	again, err := LoadDismissed(path, "/stores/a")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Hidden(pair[0]) {
		t.Fatal("a dismissed cluster shows after reloading")
	}
	if other, _ := LoadDismissed(path, "/stores/b"); other.Hidden(pair[0]) {
		t.Fatal("a dismissal of one store hides the cluster in another")
	}
	joined := Find([]contract.Record{rec("x", contract.KindDocument, text), rec("y", contract.KindDocument, text), rec("z", contract.KindDocument, text)}, DefaultConfig())
	if visible, hidden := again.Visible(joined); len(visible) != 1 || hidden != 0 {
		t.Fatalf("a new record joined: %d visible, %d hidden; want it back", len(visible), hidden)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDismissed(path, "/stores/a"); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a broken file: %v, want an error naming it", err)
	}
}

// Undismiss takes a dismissal back (the TUI's undo), saved; a session's
// dismissals write no file.
func TestUndismissAndSessionDismissals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dismissed.json")
	d, err := LoadDismissed(path, "/stores/a")
	if err != nil {
		t.Fatal(err)
	}
	text := "The worker runs as a systemd unit with Restart=on-failure and a RestartSec of five seconds."
	pair := Find([]contract.Record{rec("x", contract.KindDocument, text), rec("y", contract.KindDocument, text)}, DefaultConfig())
	if err := d.Dismiss(pair[0]); err != nil {
		t.Fatal(err)
	}
	if err := d.Undismiss(pair[0]); err != nil {
		t.Fatal(err)
	}
	again, err := LoadDismissed(path, "/stores/a")
	if err != nil {
		t.Fatal(err)
	}
	if again.Hidden(pair[0]) {
		t.Fatal("an undismissed cluster stays hidden after reloading")
	}
	s := SessionDismissed()
	if err := s.Dismiss(pair[0]); err != nil || !s.Hidden(pair[0]) {
		t.Fatalf("a session dismissal: %v, hidden %v", err, s.Hidden(pair[0]))
	}
}
