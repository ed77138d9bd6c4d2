// Package backup is what a mnemo backup file is and how one is read back:
// the report of a backup (Info), the interface an engine that writes one
// offers (Backuper), and the logical format, a stream of whole records and
// audit events that any engine offering contract.Restorer reads back
// exactly. engine/bolt writes its own format instead, a consistent copy of
// its bbolt file (docs/backup.md); Sniff tells the two apart.
package backup

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"mnemo/contract"
	"mnemo/server/audit"
)

// Formats of a backup file.
const (
	// FormatBolt is a copy of a directory store's bbolt file (mnemo.db), taken
	// in one read transaction: everything the store holds but the files
	// derived from it (search index, saved table, content index).
	FormatBolt = "bolt"
	// FormatLogical is a JSON-lines stream: a header, every record whole
	// (item, status, times, expiry, successor), every audit event, and an
	// end line with the counts, so a cut file is refused.
	FormatLogical = "logical"
)

// Info reports a backup written or restored.
type Info struct {
	Format string `json:"format"`
	// Engine is the engine the backup was taken from.
	Engine string `json:"engine"`
	// At is when the backup's snapshot was taken.
	At time.Time `json:"-"`
	// Records counts every record, service sandboxes included; Audit the
	// audit log's events.
	Records int   `json:"records"`
	Audit   int   `json:"audit_events"`
	Bytes   int64 `json:"bytes"`
}

// MarshalJSON writes at with milliseconds.
func (i Info) MarshalJSON() ([]byte, error) {
	type plain Info
	return json.Marshal(struct {
		plain
		At string `json:"at"`
	}{plain(i), contract.FormatMillis(i.At)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (i *Info) UnmarshalJSON(data []byte) error {
	type plain Info
	var w struct {
		plain
		At string `json:"at"`
	}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*i = Info(w.plain)
	if w.At != "" {
		at, err := contract.ParseTime(w.At)
		if err != nil {
			return fmt.Errorf("backup at: %w", err)
		}
		i.At = at
	}
	return nil
}

// Backuper is an engine that writes a consistent backup of its whole store
// while it is in use (engine/bolt, engine/postgres).
type Backuper interface {
	Backup(ctx context.Context, w io.Writer) (Info, error)
}

// boltMagic is bbolt's meta page magic, at byte 16 of its file.
const boltMagic = 0xED0CDAED

// Sniff reads the start of a backup and tells its format; r keeps every byte.
func Sniff(r *bufio.Reader) (string, error) {
	head, err := r.Peek(24)
	if len(head) > 0 && head[0] == '{' {
		return FormatLogical, nil
	}
	if len(head) >= 24 {
		m := uint32(head[16]) | uint32(head[17])<<8 | uint32(head[18])<<16 | uint32(head[19])<<24
		if m == boltMagic {
			return FormatBolt, nil
		}
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return "", contract.Invalid("cannot read the backup: %v", err)
	}
	return "", contract.Invalid("this is not a mnemo backup (neither a store's bbolt file nor a logical backup)")
}

// logicalVersion is the logical format's version.
const logicalVersion = 1

// line is one line of a logical backup: exactly one field is set.
type line struct {
	Header *header          `json:"mnemo_backup,omitempty"`
	Record *contract.Record `json:"record,omitempty"`
	Audit  *audit.Event     `json:"audit,omitempty"`
	End    *end             `json:"end,omitempty"`
}

type header struct {
	Version int    `json:"version"`
	Engine  string `json:"engine"`
	At      string `json:"at"`
}

type end struct {
	Records int `json:"records"`
	Audit   int `json:"audit_events"`
}

// Writer writes a logical backup.
type Writer struct {
	w    *bufio.Writer
	n    countingWriter
	info Info
	err  error
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// NewWriter starts a logical backup of engine's store taken at at.
func NewWriter(w io.Writer, engine string, at time.Time) *Writer {
	bw := &Writer{info: Info{Format: FormatLogical, Engine: engine, At: at.UTC()}}
	bw.n.w = w
	bw.w = bufio.NewWriterSize(&bw.n, 1<<16)
	bw.put(line{Header: &header{Version: logicalVersion, Engine: engine, At: contract.FormatMillis(at)}})
	return bw
}

func (w *Writer) put(l line) {
	if w.err != nil {
		return
	}
	b, err := json.Marshal(l)
	if err != nil {
		w.err = contract.EngineErr("cannot encode the backup: %w", err)
		return
	}
	b = append(b, '\n')
	if _, err := w.w.Write(b); err != nil {
		w.err = contract.EngineErr("cannot write the backup: %w", err)
	}
}

// Record writes one whole record (its item set).
func (w *Writer) Record(r contract.Record) error {
	if r.Item == nil {
		return contract.EngineErr("record %s has no item to back up", r.ID)
	}
	whole := r.Whole()
	w.put(line{Record: &whole})
	w.info.Records++
	return w.err
}

// Audit writes one audit event.
func (w *Writer) Audit(ev audit.Event) error {
	w.put(line{Audit: &ev})
	w.info.Audit++
	return w.err
}

// Close writes the end line and flushes; it returns what was written.
func (w *Writer) Close() (Info, error) {
	w.put(line{End: &end{Records: w.info.Records, Audit: w.info.Audit}})
	if w.err == nil {
		if err := w.w.Flush(); err != nil {
			w.err = contract.EngineErr("cannot write the backup: %w", err)
		}
	}
	w.info.Bytes = w.n.n
	return w.info, w.err
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Target is what a logical backup is restored into: an engine writing whole
// records, and its audit log.
type Target interface {
	contract.Restorer
	audit.Log
}

// RestoreLogical reads a logical backup and writes it into t: records in
// batches of contract.MaxRestoreMany, then the audit events. A line that is
// not part of the format, or a file without its end line (cut short), is an
// Invalid error naming the line; what was written before stays written.
func RestoreLogical(ctx context.Context, r io.Reader, t Target) (info Info, err error) {
	cr := &countingReader{r: r}
	defer func() { info.Bytes = cr.n }()
	sc := bufio.NewScanner(cr)
	sc.Buffer(make([]byte, 0, 1<<16), 64<<20)
	info.Format = FormatLogical
	var batch []contract.Record
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if _, err := t.Restore(ctx, batch); err != nil {
			return err
		}
		batch = batch[:0]
		return nil
	}
	n := 0
	var done *end
	for sc.Scan() {
		n++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if done != nil {
			return info, contract.Invalid("backup line %d follows the end line", n)
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return info, contract.Invalid("backup line %d is not a backup line: %s", n, contract.DescribeJSONError(err))
		}
		switch {
		case n == 1 && l.Header == nil:
			return info, contract.Invalid("backup line 1 is not a mnemo backup header")
		case l.Header != nil:
			if n != 1 {
				return info, contract.Invalid("backup line %d is a second header", n)
			}
			if l.Header.Version != logicalVersion {
				return info, contract.Invalid("backup version %d; this mnemo reads version %d", l.Header.Version, logicalVersion)
			}
			info.Engine = l.Header.Engine
			if at, err := contract.ParseTime(l.Header.At); err == nil {
				info.At = at
			}
		case l.Record != nil:
			if info.Audit > 0 {
				return info, contract.Invalid("backup line %d: a record after the audit events", n)
			}
			batch = append(batch, *l.Record)
			info.Records++
			if len(batch) == contract.MaxRestoreMany {
				if err := flush(); err != nil {
					return info, fmt.Errorf("backup line %d: %w", n, err)
				}
			}
		case l.Audit != nil:
			if err := flush(); err != nil {
				return info, fmt.Errorf("backup line %d: %w", n, err)
			}
			if err := t.AppendAudit(ctx, *l.Audit); err != nil {
				return info, err
			}
			info.Audit++
		case l.End != nil:
			done = l.End
		default:
			return info, contract.Invalid("backup line %d holds no header, record, audit event or end", n)
		}
	}
	if err := sc.Err(); err != nil {
		return info, contract.Invalid("cannot read the backup after line %d: %v", n, err)
	}
	if err := flush(); err != nil {
		return info, err
	}
	if done == nil {
		return info, contract.Invalid("the backup ends at line %d without its end line: it was cut short", n)
	}
	if done.Records != info.Records || done.Audit != info.Audit {
		return info, contract.Invalid("the backup's end line counts %d records and %d audit events; the file holds %d and %d", done.Records, done.Audit, info.Records, info.Audit)
	}
	return info, nil
}
