package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"mnemo/contract"
)

// ClaudeCodeTail follows Claude Code's files at a path as sessions write
// them: its first Poll reads everything, as ClaudeCode.Read does, and each
// later one reads only the transcript lines appended since (a line still
// being written waits for its newline), new transcripts, and the memory files
// that changed. Every record keeps the location and fingerprint a plain
// import gives it, so following and importing again agree.
type ClaudeCodeTail struct {
	path        string
	transcripts map[string]*ccTranscript
	memory      map[string]fileStamp
	// skipped holds the locations already reported, so a file that stays
	// unreadable is reported once, not at every poll.
	skipped map[string]bool
}

// fileStamp is what tells a memory file changed.
type fileStamp struct {
	size int64
	mod  time.Time
}

// NewClaudeCodeTail follows path (~/.claude, a project folder, a CLAUDE.md or
// one session .jsonl).
func NewClaudeCodeTail(path string) *ClaudeCodeTail {
	return &ClaudeCodeTail{path: path, transcripts: map[string]*ccTranscript{},
		memory: map[string]fileStamp{}, skipped: map[string]bool{}}
}

// Name implements Source: a tail imports as claude-code.
func (t *ClaudeCodeTail) Name() string { return ClaudeCode{}.Name() }

// Describe implements Source.
func (t *ClaudeCodeTail) Describe() string { return ClaudeCode{}.Describe() }

// Sniff implements Source.
func (t *ClaudeCodeTail) Sniff(path string) bool { return ClaudeCode{}.Sniff(path) }

// Read implements Source as one Poll of the tail's own path, so a tail can be
// handed to an import as its source, once per poll.
func (t *ClaudeCodeTail) Read(ctx context.Context, _ string, sink Sink) error {
	return t.Poll(ctx, sink)
}

// Poll reads what is new since the last Poll.
func (t *ClaudeCodeTail) Poll(ctx context.Context, sink Sink) error {
	once := &onceSink{Sink: sink, seen: t.skipped}
	c := ClaudeCode{}
	return c.each(ctx, t.path, once, func(root, p string, transcript bool) error {
		st, err := os.Stat(p)
		if err != nil {
			once.Skip(Skip{Location: rel(root, p), Reason: unwrapPath(err).Error()})
			return nil
		}
		if transcript {
			tr := t.transcripts[p]
			if tr == nil {
				tr = newCCTranscript(root, p)
				t.transcripts[p] = tr
			}
			if st.Size() == tr.offset {
				return nil
			}
			return tr.read(ctx, p, once, true)
		}
		stamp := fileStamp{size: st.Size(), mod: st.ModTime()}
		if old, ok := t.memory[p]; ok && old == stamp {
			return nil
		}
		t.memory[p] = stamp
		return c.memoryFile(root, p, once)
	})
}

// onceSink passes each skip's location on once.
type onceSink struct {
	Sink
	seen map[string]bool
}

func (s *onceSink) Skip(k Skip) {
	if s.seen[k.Location] {
		return
	}
	s.seen[k.Location] = true
	s.Sink.Skip(k)
}

// ccTranscript is one transcript file read so far: where the next read
// starts, and what the turns after it need from the turns before (their
// sessions' places and folders, the tools the assistant called).
type ccTranscript struct {
	root, name, project string
	offset              int64
	line                int
	sessions            map[string]*ccSession
	tools               map[string]string // tool_use id -> the tool's name
}

// ccSession is one session of a transcript: its folder and how many of its
// turns were read (the next turn's place in it).
type ccSession struct {
	cwd   string
	turns int
}

func newCCTranscript(root, path string) *ccTranscript {
	return &ccTranscript{root: root, name: rel(root, path), project: ccProject(root, path),
		sessions: map[string]*ccSession{}, tools: map[string]string{}}
}

// ccPending is a session's turns of one read, in file order.
type ccPending struct {
	id       string
	turns    []contract.Turn
	lines    []int
	speakers []*contract.ObservedActor
}

// read reads the transcript from where the last read ended to its end and
// hands each session's new turns to sink, sessions in the order they first
// appear. follow leaves a last line without its newline for the next read
// unless it is whole JSON (a session may be writing it); otherwise it is
// read, or skipped when it is not JSON. A file shorter than what was read
// was replaced: it is read again from its start (replays store nothing).
func (tr *ccTranscript) read(ctx context.Context, path string, sink Sink, follow bool) error {
	f, err := os.Open(path)
	if err != nil {
		sink.Skip(Skip{Location: tr.name, Reason: unwrapPath(err).Error()})
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() < tr.offset {
		*tr = *newCCTranscript(tr.root, path)
	}
	if _, err := f.Seek(tr.offset, io.SeekStart); err != nil {
		sink.Skip(Skip{Location: tr.name, Reason: unwrapPath(err).Error()})
		return nil
	}
	var order []string
	pending := map[string]*ccPending{}
	br := bufio.NewReaderSize(f, 256<<10)
	for {
		raw, rerr := br.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			sink.Skip(Skip{Location: fmt.Sprintf("%s:%d", tr.name, tr.line+1), Reason: rerr.Error()})
			break
		}
		if rerr != nil && follow && len(bytes.TrimSpace(raw)) > 0 && !json.Valid(raw) {
			break // a line still being written: the next read takes it whole
		}
		tr.offset += int64(len(raw))
		if len(raw) > 0 {
			tr.line++
		}
		if line := bytes.TrimSpace(raw); len(line) > 0 {
			tr.turn(line, sink, pending, &order)
		}
		if rerr != nil {
			break
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for _, sid := range order {
		p := pending[sid]
		s := tr.sessions[sid]
		proj := tr.project
		if proj == "" && s.cwd != "" {
			proj = filepath.Base(s.cwd)
		}
		meta := contract.MemoryMeta{Namespace: ns("agent", "claude-code", "project", proj),
			Tags: []string{"claude-code", "transcript"}}
		if sid != "" {
			meta.ThreadID = contract.Ptr(sid)
		}
		if s.cwd != "" {
			meta.Folder = contract.Ptr(s.cwd)
		}
		first := s.turns
		s.turns += len(p.turns)
		locate := func(i int) string { return fmt.Sprintf("%s:%d", tr.name, p.lines[i-first]) }
		if err := conversationRecordsFrom(first, p.turns, p.speakers, meta, locate, sink); err != nil {
			return err
		}
	}
	return nil
}

// turn reads line tr.line as a turn of its session, or skips or omits it.
func (tr *ccTranscript) turn(line []byte, sink Sink, pending map[string]*ccPending, order *[]string) {
	where := fmt.Sprintf("%s:%d", tr.name, tr.line)
	var l ccLine
	if err := json.Unmarshal(line, &l); err != nil {
		sink.Skip(Skip{Location: where, Reason: "not a JSON transcript line: " + err.Error()})
		return
	}
	turn, results, why, ok := ccTurn(l)
	switch {
	case !ok:
		if why != "" {
			sink.Omit(why)
		}
		return
	case turn.Text == "":
		sink.Skip(Skip{Location: where, Reason: "message has no content this reader knows"})
		return
	}
	sid := l.SessionID
	s := tr.sessions[sid]
	if s == nil {
		s = &ccSession{}
		tr.sessions[sid] = s
	}
	if s.cwd == "" {
		s.cwd = l.Cwd
	}
	p := pending[sid]
	if p == nil {
		p = &ccPending{id: sid}
		pending[sid] = p
		*order = append(*order, sid)
	}
	for _, c := range turn.ToolCalls {
		if c.ID != nil {
			tr.tools[*c.ID] = c.Name
		}
	}
	p.turns = append(p.turns, turn)
	p.lines = append(p.lines, tr.line)
	p.speakers = append(p.speakers, ccSpeaker(turn, results, tr.tools))
}
