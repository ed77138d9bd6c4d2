package paging

import (
	"errors"
	"strconv"
	"testing"

	"mnemo/contract"
)

func TestWalk(t *testing.T) {
	str := func(s string) *string { return &s }
	stop := errors.New("stop")
	tests := []struct {
		name     string
		start    *string
		next     func(n int, cursor *string) (*string, error)
		most     int
		wantSeen int
		wantErr  string
		wantKind contract.ErrorKind
	}{
		{name: "ends when no cursor comes back", most: 10, wantSeen: 3,
			next: func(n int, _ *string) (*string, error) {
				if n == 2 {
					return nil, nil
				}
				return str(strconv.Itoa(n)), nil
			}},
		{name: "starts at the given cursor", start: str("c5"), most: 10, wantSeen: 1,
			next: func(_ int, c *string) (*string, error) {
				if c == nil || *c != "c5" {
					return nil, stop
				}
				return nil, nil
			}},
		{name: "a page's error stops the walk", most: 10, wantSeen: 1, wantErr: "stop",
			next: func(int, *string) (*string, error) { return nil, stop }},
		{name: "a repeated cursor is an engine error", most: 10, wantSeen: 2, wantKind: contract.KindEngine,
			wantErr: "engine error: the list cursor `same` repeated; paging never ends",
			next:    func(int, *string) (*string, error) { return str("same"), nil }},
		{name: "a chain that never ends is an engine error", most: 3, wantSeen: 3, wantKind: contract.KindEngine,
			wantErr: "engine error: list did not end within 3 pages",
			next:    func(n int, _ *string) (*string, error) { return str(strconv.Itoa(n)), nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := 0
			err := walk(tt.start, "list", tt.most, func(c *string) (*string, error) {
				seen++
				return tt.next(seen-1, c)
			})
			if seen != tt.wantSeen {
				t.Errorf("called %d times, want %d", seen, tt.wantSeen)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("err = %v", err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("err = %v, want %q", err, tt.wantErr)
			case tt.wantKind != "" && contract.KindOf(err) != tt.wantKind:
				t.Errorf("kind = %v, want %v", contract.KindOf(err), tt.wantKind)
			}
		})
	}
}
