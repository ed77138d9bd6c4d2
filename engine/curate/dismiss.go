package curate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Dismissed holds the clusters a person said are different ("these are
// different"), per store, in a small JSON file of their own
// ($XDG_STATE_HOME/mnemo/dismissed.json): a dismissal is one curator's
// judgement, kept beside their other state rather than written into the
// memory agents read. A dismissed cluster stays hidden while its members are
// a subset of what was dismissed; a new record joining it brings it back.
// A Dismissed is safe for concurrent use (a TUI clusters in the background
// while its user dismisses).
type Dismissed struct {
	mu    sync.Mutex
	path  string // "" keeps the dismissals in memory only
	store string
	file  dismissedFile
}

// SessionDismissed answers dismissals kept in memory only, for as long as
// the value lives: an SSH session's, which writes nothing on the server.
func SessionDismissed() *Dismissed {
	return &Dismissed{file: dismissedFile{Version: 1, Stores: map[string][][]string{}}}
}

type dismissedFile struct {
	Version int                   `json:"version"`
	Stores  map[string][][]string `json:"stores"`
}

// LoadDismissed reads the dismissals of one store (a directory, a postgres://
// URL or a remote URL) from path; a missing file holds none.
func LoadDismissed(path, store string) (*Dismissed, error) {
	d := &Dismissed{path: path, store: store, file: dismissedFile{Version: 1, Stores: map[string][][]string{}}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read dismissed clusters %s: %w", path, err)
	}
	if err := json.Unmarshal(data, &d.file); err != nil {
		return nil, fmt.Errorf("dismissed clusters %s is not valid JSON: %w", path, err)
	}
	if d.file.Stores == nil {
		d.file.Stores = map[string][][]string{}
	}
	return d, nil
}

// Hidden tells whether a cluster was dismissed and nothing new joined it.
func (d *Dismissed) Hidden(c Cluster) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hidden(c)
}

func (d *Dismissed) hidden(c Cluster) bool {
	for _, set := range d.file.Stores[d.store] {
		all := true
		for _, id := range c.IDs() {
			if _, ok := slices.BinarySearch(set, id); !ok {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// Dismiss records a cluster as dismissed and saves the file.
func (d *Dismissed) Dismiss(c Cluster) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := c.IDs()
	slices.Sort(ids)
	d.file.Stores[d.store] = append(d.file.Stores[d.store], ids)
	return d.save()
}

// Undismiss takes back the last dismissal of exactly these members (undo).
func (d *Dismissed) Undismiss(c Cluster) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	ids := c.IDs()
	slices.Sort(ids)
	sets := d.file.Stores[d.store]
	for i := len(sets) - 1; i >= 0; i-- {
		if slices.Equal(sets[i], ids) {
			d.file.Stores[d.store] = slices.Delete(sets, i, i+1)
			return d.save()
		}
	}
	return nil
}

// Visible answers the clusters not hidden by a dismissal, and how many were.
func (d *Dismissed) Visible(cs []Cluster) ([]Cluster, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Cluster, 0, len(cs))
	for _, c := range cs {
		if !d.hidden(c) {
			out = append(out, c)
		}
	}
	return out, len(cs) - len(out)
}

func (d *Dismissed) save() error {
	if d.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(d.file, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(d.path), 0o700); err != nil {
		return fmt.Errorf("cannot save dismissed clusters: %w", err)
	}
	tmp := d.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("cannot save dismissed clusters: %w", err)
	}
	if err := os.Rename(tmp, d.path); err != nil {
		return fmt.Errorf("cannot save dismissed clusters: %w", err)
	}
	return nil
}
