package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mnemo/contract"
)

// ClaudeCode reads Claude Code's memory: memory files (CLAUDE.md,
// CLAUDE.local.md, .claude/rules/*.md, the auto-memory projects/*/memory/*.md)
// as one document per section, and session transcripts
// (projects/<project>/<session>.jsonl) as one conversation record per turn,
// its speaker the observed actor.
type ClaudeCode struct{}

// Name implements Source.
func (ClaudeCode) Name() string { return "claude-code" }

// Describe implements Source.
func (ClaudeCode) Describe() string {
	return "Claude Code: ~/.claude, a project folder, a CLAUDE.md or a session .jsonl; memory file sections and transcripts"
}

// Sniff implements Source.
func (ClaudeCode) Sniff(path string) bool {
	if isDir(path) {
		if filepath.Base(path) == ".claude" {
			return true
		}
		for _, name := range []string{"CLAUDE.md", "CLAUDE.local.md", ".claude"} {
			if _, err := os.Stat(filepath.Join(path, name)); err == nil {
				return true
			}
		}
		// ~/.claude's projects folder, one project's folder of transcripts,
		// or a folder of projects holding CLAUDE.md files
		for _, pattern := range []string{"*.jsonl", "*/*.jsonl", "projects/*/*.jsonl"} {
			if matches, _ := filepath.Glob(filepath.Join(path, pattern)); len(matches) > 0 && isTranscript(matches[0]) {
				return true
			}
		}
		matches, _ := filepath.Glob(filepath.Join(path, "*", "CLAUDE.md"))
		return len(matches) > 0
	}
	if ccMemoryFile(path, path) {
		return true
	}
	return strings.HasSuffix(path, ".jsonl") && isTranscript(path)
}

func isTranscript(path string) bool {
	h := head(path, 16<<10)
	return bytes.Contains(h, []byte(`"sessionId"`)) && (bytes.Contains(h, []byte(`"parentUuid"`)) || bytes.Contains(h, []byte(`"leafUuid"`)))
}

// ccMemoryFile tells whether path is a Claude Code memory file.
func ccMemoryFile(root, path string) bool {
	base := filepath.Base(path)
	if base == "CLAUDE.md" || base == "CLAUDE.local.md" {
		return true
	}
	if !strings.HasSuffix(base, ".md") {
		return false
	}
	dir := filepath.ToSlash(filepath.Dir(path))
	return strings.HasSuffix(dir, ".claude/rules") || strings.HasSuffix(dir, "/memory") && strings.Contains(dir, "projects/")
}

// Read implements Source.
func (c ClaudeCode) Read(ctx context.Context, path string, sink Sink) error {
	return c.each(ctx, path, sink, func(root, p string, transcript bool) error {
		if transcript {
			return newCCTranscript(root, p).read(ctx, p, sink, false)
		}
		return c.memoryFile(root, p, sink)
	})
}

// each calls fn for every memory file and transcript at path (one of them, or
// a folder holding them), with the root locations are relative to.
func (ClaudeCode) each(ctx context.Context, path string, sink Sink, fn func(root, p string, transcript bool) error) error {
	st, err := os.Stat(path)
	if err != nil {
		return contract.Invalid("cannot read %s: %v", path, unwrapPath(err))
	}
	if !st.IsDir() {
		return fn(filepath.Dir(path), path, strings.HasSuffix(path, ".jsonl"))
	}
	skip := func(dir string) bool {
		switch dir {
		case ".git", "node_modules", "vendor", "todos", "shell-snapshots", "statsig", "ide", "plugins":
			return true
		}
		return false
	}
	return walkFiles(ctx, path, sink, skip, func(p string) error {
		switch {
		case ccMemoryFile(path, p):
			return fn(path, p, false)
		case strings.HasSuffix(p, ".jsonl") && (strings.Contains(filepath.ToSlash(p), "projects/") || isTranscript(p)):
			// not ~/.claude/history.jsonl, the prompt history
			return fn(path, p, true)
		}
		return nil
	})
}

// ccProject names the project a file belongs to: the folder under
// projects/ (Claude Code's encoding of the project's path), else the folder
// holding the memory file, or none for the user's own ~/.claude.
func ccProject(root, path string) string {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == "projects" && i+1 < len(parts)-1 {
			return strings.Trim(parts[i+1], "-")
		}
	}
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "rules" {
		dir = filepath.Dir(dir)
	}
	if filepath.Base(dir) == ".claude" {
		abs, _ := filepath.Abs(dir)
		if home, err := os.UserHomeDir(); err == nil && abs == filepath.Join(home, ".claude") {
			return ""
		}
		dir = filepath.Dir(dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Base(dir)
	}
	return filepath.Base(abs)
}

func (ClaudeCode) memoryFile(root, path string, sink Sink) error {
	data, err := os.ReadFile(path)
	name := rel(root, path)
	if err != nil {
		sink.Skip(Skip{Location: name, Reason: unwrapPath(err).Error()})
		return nil
	}
	_, text, start, _ := frontmatter(strings.ReplaceAll(string(data), "\r\n", "\n"))
	space := ns("agent", "claude-code", "project", ccProject(root, path))
	for _, s := range sections(text, start) {
		if s.body == "" {
			sink.Omit("memory file heading without text")
			continue
		}
		title := s.heading
		loc := fmt.Sprintf("%s#%s", name, s.anchor)
		if title == "" {
			title = filepath.Base(path)
			loc = name + "#top"
		}
		it := contract.Document(s.body, contract.MemoryMeta{Namespace: space, FilePath: contract.Ptr(name),
			Tags: []string{"claude-code", "memory-file"}})
		it.Title = contract.Ptr(title)
		it.Mime = contract.Ptr("text/markdown")
		if err := sink.Record(Record{Item: it, Location: loc}); err != nil {
			return err
		}
	}
	return nil
}

// ccLine is one line of a transcript.
type ccLine struct {
	Type        string          `json:"type"`
	UUID        string          `json:"uuid"`
	ParentUUID  *string         `json:"parentUuid"`
	SessionID   string          `json:"sessionId"`
	Timestamp   string          `json:"timestamp"`
	Cwd         string          `json:"cwd"`
	GitBranch   string          `json:"gitBranch"`
	IsMeta      bool            `json:"isMeta"`
	IsSidechain bool            `json:"isSidechain"`
	Message     json.RawMessage `json:"message"`
	Summary     string          `json:"summary"`
}

type ccMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// ccSession gathers one session's turns with the file line of each.
// ccSpeaker is who spoke a turn: the user (the transcript does not name
// them), Claude, or the tools whose results a tool turn carries (named from
// the tool_use ids the assistant's earlier turns called them by).
func ccSpeaker(t contract.Turn, results []string, tools map[string]string) *contract.ObservedActor {
	switch t.Role {
	case contract.RoleAssistant:
		return speaker("assistant", "Claude")
	case contract.RoleTool:
		var names []string
		for _, id := range results {
			if n := tools[id]; n != "" && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
		return speaker("tool", strings.Join(names, ", "))
	}
	return speaker(string(t.Role), "")
}

// ccTurn reads a transcript line as a turn, with the tool_use ids of the
// tool results it carries. When it is not one, why says what it is (empty
// for lines with nothing to say).
func ccTurn(l ccLine) (contract.Turn, []string, string, bool) {
	switch {
	case l.Type == "summary":
		return contract.Turn{}, nil, "summary line", false
	case l.Type != "user" && l.Type != "assistant":
		if l.Type == "" {
			return contract.Turn{}, nil, "line without a type", false
		}
		return contract.Turn{}, nil, l.Type + " line", false
	case l.IsMeta:
		return contract.Turn{}, nil, "meta message (command caveats and the like)", false
	case l.IsSidechain:
		return contract.Turn{}, nil, "sidechain (subagent) message", false
	}
	var m ccMessage
	if len(l.Message) == 0 || json.Unmarshal(l.Message, &m) != nil {
		return contract.Turn{}, nil, "", true
	}
	role, ok := contract.ParseRole(m.Role)
	if !ok {
		role = contract.Role(l.Type)
	}
	t := contract.Turn{Role: role}
	if ts := parseTime(l.Timestamp); ts != nil {
		t.At = ts
	}
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		t.Text = strings.TrimSpace(s)
		return t, nil, "", true
	}
	var blocks []ccBlock
	if json.Unmarshal(m.Content, &blocks) != nil {
		return t, nil, "", true
	}
	var texts, resultIDs []string
	results := 0
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				texts = append(texts, strings.TrimSpace(b.Text))
			}
		case "tool_use":
			ref := contract.ToolCallRef{Name: b.Name}
			if b.ID != "" {
				ref.ID = contract.Ptr(b.ID)
			}
			if ref.Name == "" {
				ref.Name = "tool"
			}
			t.ToolCalls = append(t.ToolCalls, ref)
			texts = append(texts, ref.Name+" "+clip(compactJSON(b.Input), 500))
		case "tool_result":
			results++
			if b.ToolUseID != "" {
				resultIDs = append(resultIDs, b.ToolUseID)
			}
			texts = append(texts, clip(toolResultText(b.Content), 2000))
		}
	}
	if results > 0 && results == len(blocks) {
		t.Role = contract.RoleTool
	}
	t.Text = strings.TrimSpace(strings.Join(texts, "\n\n"))
	if t.Text == "" && len(blocks) > 0 {
		return t, nil, "message with only thinking or images", false
	}
	return t, resultIDs, "", true
}

// toolResultText is a tool_result's content: a string or text blocks.
func toolResultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []ccBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// clip cuts s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8RuneStart(s[n]) {
		n--
	}
	return s[:n] + " …"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
