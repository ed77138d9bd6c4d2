// Package ingest reads the memory other agent systems keep (ChatGPT exports,
// Claude Code memory files and transcripts, basic-memory notes, Letta agent
// files, mem0, the LangGraph store) and turns it into contract items. It is
// neither engine nor UI: a Source only reads another system's format and
// yields contract.StoreItem values, each with the location it came from, so
// the user can trace every stored record back to its origin. Storing is the
// caller's business (mnemo import).
package ingest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"mnemo/contract"
)

// Record is one item read from a source.
type Record struct {
	// Item is the memory, its namespace relative to the source (Place puts it
	// under the user's namespace). Its source is set by the reader from
	// Location.
	Item contract.StoreItem
	// Location traces the record back: "file:line", "file#key" or a row key.
	// It is stable across re-imports of an unchanged entry, because it goes
	// into the item's source id and so into its fingerprint.
	Location string
	// ExpiresAt, when set, is when the record expires.
	ExpiresAt *time.Time
	// SupersededBy, when set, is the later version of this record (its item
	// and location): this one is stored and then superseded by it.
	SupersededBy *Record
}

// Skip is an entry of the source that is not imported, and why.
type Skip struct {
	Location string `json:"location"`
	Reason   string `json:"reason"`
}

// Sink receives what a source reads, in order.
type Sink interface {
	// Record takes one record; an error stops the read.
	Record(Record) error
	// Skip notes a bad entry: one that cannot be imported (the import then
	// exits 2).
	Skip(Skip)
	// Omit notes an entry left out by design (a summary line, a hidden system
	// message); a dry run counts these by reason.
	Omit(reason string)
}

// Source reads one system's format.
type Source interface {
	// Name is the --from value.
	Name() string
	// Describe is one line for mnemo import --help.
	Describe() string
	// Sniff tells whether path looks like this source's data.
	Sniff(path string) bool
	// Read reads path and hands every record and skip to sink.
	Read(ctx context.Context, path string, sink Sink) error
}

// Sources lists every source, in the order --help shows them.
func Sources() []Source {
	return []Source{ChatGPT{}, ClaudeCode{}, BasicMemory{}, Letta{}, Mem0{}, LangGraph{}}
}

// Names lists the --from values.
func Names() []string {
	var out []string
	for _, s := range Sources() {
		out = append(out, s.Name())
	}
	return out
}

// Lookup returns the source named name.
func Lookup(name string) (Source, error) {
	for _, s := range Sources() {
		if s.Name() == name {
			return s, nil
		}
	}
	return nil, contract.Invalid("`%s` is not a source; --from takes one of %s", name, strings.Join(Names(), ", "))
}

// Detect returns the one source path fits, or an error naming every source
// that fits (or saying none does).
func Detect(path string) (Source, error) {
	var fits []Source
	for _, s := range Sources() {
		if s.Sniff(path) {
			fits = append(fits, s)
		}
	}
	switch len(fits) {
	case 1:
		return fits[0], nil
	case 0:
		return nil, contract.Invalid("cannot tell which system %s comes from; name it with --from (one of %s)", path, strings.Join(Names(), ", "))
	}
	var names []string
	for _, s := range fits {
		names = append(names, s.Name())
	}
	return nil, contract.Invalid("%s fits more than one source; name it with --from %s", path, strings.Join(names, " or --from "))
}

// CheckPath tells, before anything is opened for writing, whether path can
// be read at all: a file or folder that exists, or a URL for a source that
// reads URLs.
func CheckPath(src Source, path string) error {
	if strings.Contains(path, "://") {
		if !src.Sniff(path) {
			return contract.Invalid("%s reads a file or a folder, not a URL", src.Name())
		}
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return contract.Invalid("cannot read %s: %v", path, unwrapPath(err))
	}
	return nil
}

// Placed is a Sink adapter: it puts every record under place, sets its source
// to {"kind": "import", "id": "SOURCE:LOCATION"}, validates it and passes it
// on; a record that is invalid becomes a skip, so nothing is half-stored.
type Placed struct {
	Source string
	Place  contract.Namespace
	Next   PlacedSink
}

// PlacedSink receives records ready to store: SupersededBy is the successor's id.
type PlacedSink interface {
	Store(item contract.StoreItem, location string, expiresAt *time.Time, supersededBy string) error
	Skip(Skip)
	Omit(reason string)
}

// Record implements Sink.
func (p *Placed) Record(r Record) error {
	item, err := p.place(r.Item, r.Location)
	if err != nil {
		p.Next.Skip(Skip{Location: r.Location, Reason: contract.AsError(err).Message})
		return nil
	}
	by := ""
	if r.SupersededBy != nil {
		succ, err := p.place(r.SupersededBy.Item, r.SupersededBy.Location)
		if err != nil {
			p.Next.Skip(Skip{Location: r.Location, Reason: contract.AsError(err).Message})
			return nil
		}
		by = succ.Fingerprint()
	}
	return p.Next.Store(item, r.Location, r.ExpiresAt, by)
}

// Skip implements Sink.
func (p *Placed) Skip(s Skip) { p.Next.Skip(s) }

// Omit implements Sink.
func (p *Placed) Omit(reason string) { p.Next.Omit(reason) }

func (p *Placed) place(it contract.StoreItem, location string) (contract.StoreItem, error) {
	segs := append(p.Place.Segments(), it.Meta.Namespace.Segments()...)
	ns, err := contract.NewNamespace(segs...)
	if err != nil {
		return it, err
	}
	it.Meta.Namespace = ns
	if it.Meta.Source.ID == nil {
		it.Meta.Source = contract.SourceRef{Kind: contract.SourceImport, ID: contract.Ptr(p.Source + ":" + location)}
	}
	if err := it.Validate(); err != nil {
		return it, err
	}
	return it, nil
}

// ns builds a namespace of sanitised segments, kind then raw id, skipping
// empty ids.
func ns(pairs ...string) contract.Namespace {
	var segs []contract.Segment
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		segs = append(segs, contract.SanitizedSegment(contract.SegmentKind(pairs[i]), pairs[i+1]))
	}
	if len(segs) > contract.MaxDepth {
		segs = segs[:contract.MaxDepth]
	}
	n, _ := contract.NewNamespace(segs...)
	return n
}

// conversationRecords stores turns one conversation record per turn, each
// with its speaker as the observed actor (speakers[i], nil when the source
// does not say), its place in the conversation as meta.turns, and its time as
// observed_at. A turn of its own is what a question about what someone said
// finds; thread_id and turns lead back to the turns around it. A turn, once
// said, never changes, so a re-import of a grown conversation stores only the
// new turns. locate names a turn's location from its index.
func conversationRecords(turns []contract.Turn, speakers []*contract.ObservedActor, meta contract.MemoryMeta, locate func(i int) string, sink Sink) error {
	return conversationRecordsFrom(0, turns, speakers, meta, locate, sink)
}

// conversationRecordsFrom is conversationRecords for turns that continue a
// conversation whose first `first` turns were stored before: turns[j] is turn
// first+j, and locate and meta.turns count from the conversation's start.
func conversationRecordsFrom(first int, turns []contract.Turn, speakers []*contract.ObservedActor, meta contract.MemoryMeta, locate func(i int) string, sink Sink) error {
	for j, t := range turns {
		i := first + j
		m := meta
		m.Tags = slices.Clone(meta.Tags)
		m.Turns = &contract.TurnRange{First: uint32(i), Last: uint32(i)}
		if t.At != nil {
			m.ObservedAt = t.At
		}
		if j < len(speakers) && speakers[j] != nil {
			a := *speakers[j]
			m.ObservedActor = &a
		}
		it := contract.Conversation([]contract.Turn{t}, m)
		if err := sink.Record(Record{Item: it, Location: locate(i)}); err != nil {
			return err
		}
	}
	return nil
}

// speaker is who spoke a turn: id what the source calls them (an agent's id,
// else the turn's role), name their name when the source gives one.
func speaker(id, name string) *contract.ObservedActor {
	a := &contract.ObservedActor{ID: strings.TrimSpace(id)}
	if n := strings.TrimSpace(name); n != "" {
		a.Name = &n
		if a.ID == "" {
			a.ID = n
		}
	}
	if a.ID == "" {
		return nil
	}
	return a
}

// walkFiles calls fn for every file under root, in lexical order, skipping the
// folders skip names (root itself is never skipped). A file or folder that
// cannot be read is a skip; cancelling ctx stops the walk.
func walkFiles(ctx context.Context, root string, sink Sink, skip func(dir string) bool, fn func(path string) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			sink.Skip(Skip{Location: rel(root, p), Reason: unwrapPath(err).Error()})
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skip(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		return fn(p)
	})
}

// rel is path relative to root, or its base name when root is the file.
func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil && r != "." {
		return filepath.ToSlash(r)
	}
	return filepath.Base(path)
}

// isDir tells whether path is a directory.
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// readFile reads a file, with an error saying which.
func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, contract.Invalid("cannot read %s: %v", path, unwrapPath(err))
	}
	return b, nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// head returns the first n bytes of a file (fewer when it is shorter).
func head(path string, n int) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	buf := make([]byte, n)
	k, _ := f.Read(buf)
	return buf[:k]
}

// unixTime reads seconds since the epoch (with a fraction) as a UTC time.
func unixTime(f float64) *time.Time {
	if f <= 0 || f > 253402300799 {
		return nil
	}
	sec := int64(f)
	t := time.Unix(sec, int64((f-float64(sec))*1e9)).UTC().Truncate(time.Millisecond)
	return &t
}

// parseTime reads an RFC 3339 time, also without a zone (taken as UTC) as
// Python's isoformat writes it; nil when s is empty or unreadable.
func parseTime(s string) *time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			if y := t.Year(); y < 0 || y > 9999 {
				return nil
			}
			return &t
		}
	}
	return nil
}

func errf(format string, args ...any) error { return fmt.Errorf(format, args...) }
