package ingest

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"mnemo/contract"
)

// BasicMemory reads a basic-memory project: markdown notes with frontmatter
// (title, type, tags, permalink). Each note is a document; each observation
// "- [category] text #tag (context)" is also a learning. The project (the
// folder read) is a namespace.
type BasicMemory struct{}

// Name implements Source.
func (BasicMemory) Name() string { return "basic-memory" }

// Describe implements Source.
func (BasicMemory) Describe() string {
	return "basic-memory: a project folder (or one note) of markdown with frontmatter; notes and their observations"
}

// Sniff implements Source.
func (BasicMemory) Sniff(path string) bool {
	if !isDir(path) {
		return strings.HasSuffix(path, ".md") && bmNote(head(path, 4<<10))
	}
	found, checked := false, 0
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || checked >= 20 || found {
			return filepath.SkipAll
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != path {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			checked++
			found = bmNote(head(p, 4<<10))
		}
		return nil
	})
	return found
}

// bmNote tells whether a file starts with frontmatter that has a permalink.
func bmNote(h []byte) bool {
	return bytes.HasPrefix(h, []byte("---")) && bytes.Contains(h, []byte("\npermalink:"))
}

var (
	bmObservation = regexp.MustCompile(`^\s*[-*]\s+\[([^\]\n]+)\]\s+(.+)$`)
	bmRelation    = regexp.MustCompile(`^\s*[-*]\s+([^\[\]\s][^\[\]]*?)\s+\[\[([^\]]+)\]\]`)
	bmHashtag     = regexp.MustCompile(`(?:^|\s)#([\p{L}\p{N}_/-]+)`)
	bmContext     = regexp.MustCompile(`\s*\(([^()]*)\)\s*$`)
)

// Read implements Source.
func (BasicMemory) Read(ctx context.Context, path string, sink Sink) error {
	root := path
	if !isDir(path) {
		root = filepath.Dir(path)
		return bmRead(root, path, sink)
	}
	return walkFiles(ctx, path, sink, func(dir string) bool { return strings.HasPrefix(dir, ".") }, func(p string) error {
		if strings.HasSuffix(p, ".md") {
			return bmRead(root, p, sink)
		}
		return nil
	})
}

func bmProject(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		return filepath.Base(root)
	}
	return filepath.Base(abs)
}

func bmRead(root, path string, sink Sink) error {
	name := rel(root, path)
	data, err := os.ReadFile(path)
	if err != nil {
		sink.Skip(Skip{Location: name, Reason: unwrapPath(err).Error()})
		return nil
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	fmLines, body, bodyLine, _ := frontmatter(text)
	fm := parseFrontmatter(fmLines)
	meta := contract.MemoryMeta{Namespace: ns("project", bmProject(root)), FilePath: contract.Ptr(name)}
	if dir := filepath.ToSlash(filepath.Dir(name)); dir != "." {
		meta.Folder = contract.Ptr(dir)
	}
	noteTags := fm.list("tags")
	title := fm.str("title")
	if title == "" {
		for _, s := range sections(body, bodyLine) {
			if s.heading != "" {
				title = s.heading
				break
			}
		}
	}
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(path), ".md")
	}
	if strings.TrimSpace(body) == "" {
		sink.Skip(Skip{Location: name, Reason: "note has no text"})
		return nil
	}
	doc := contract.Document(strings.TrimSpace(body), meta)
	doc.Title = contract.Ptr(title)
	doc.Mime = contract.Ptr("text/markdown")
	doc.Meta.Tags = uniq(append([]string{"basic-memory"}, append(prefixed("type:", fm.str("type")), noteTags...)...))
	loc := name
	if p := fm.str("permalink"); p != "" {
		loc = name + "#" + p
	}
	if err := sink.Record(Record{Item: doc, Location: loc}); err != nil {
		return err
	}
	fence := false
	for _, l := range strings.Split(body, "\n") {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = !fence
		}
		if fence {
			continue
		}
		if m := bmObservation.FindStringSubmatch(l); m != nil && isCategory(m[1]) {
			category := strings.TrimSpace(m[1])
			rest := strings.TrimSpace(m[2])
			var evidence *string
			if c := bmContext.FindStringSubmatchIndex(rest); c != nil {
				evidence = contract.Ptr(strings.TrimSpace(rest[c[2]:c[3]]))
				rest = strings.TrimSpace(rest[:c[0]])
			}
			var tags []string
			for _, h := range bmHashtag.FindAllStringSubmatch(rest, -1) {
				tags = append(tags, h[1])
			}
			text := strings.TrimSpace(bmHashtag.ReplaceAllString(rest, ""))
			if text == "" {
				text = rest
			}
			lm := meta
			lm.Tags = uniq(append(append([]string{"basic-memory", "category:" + category}, noteTags...), tags...))
			kind, ok := contract.ParseLearningKind(strings.ToLower(category))
			if !ok {
				kind = contract.LearningOther
			}
			it := contract.Learning(text, kind, 1, lm)
			it.Evidence = evidence
			if err := sink.Record(Record{Item: it, Location: loc + "#[" + category + "]"}); err != nil {
				return err
			}
			continue
		}
		if bmRelation.MatchString(l) {
			sink.Omit("relation (kept in its note's text, not a record of its own)")
		}
	}
	return nil
}

func prefixed(p, s string) []string {
	if s == "" {
		return nil
	}
	return []string{p + s}
}

func uniq(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// fmValues is a frontmatter's keys: scalars and lists.
type fmValues map[string][]string

func (f fmValues) str(k string) string {
	if v := f[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (f fmValues) list(k string) []string { return f[k] }

// parseFrontmatter reads the YAML that notes use: "key: value",
// "key: [a, b]", "key: a, b" for tags, and "key:" followed by "- item" lines.
func parseFrontmatter(lines []string) fmValues {
	out := fmValues{}
	last := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasPrefix(t, "- ") && last != "" {
			out[last] = append(out[last], unquote(strings.TrimSpace(t[2:])))
			continue
		}
		k, v, ok := strings.Cut(t, ":")
		if !ok || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		last = k
		switch {
		case v == "":
			out[k] = nil
		case strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]"):
			for _, item := range strings.Split(v[1:len(v)-1], ",") {
				if item = unquote(strings.TrimSpace(item)); item != "" {
					out[k] = append(out[k], item)
				}
			}
		case k == "tags" && strings.Contains(v, ","):
			for _, item := range strings.Split(v, ",") {
				out[k] = append(out[k], unquote(strings.TrimSpace(item)))
			}
		default:
			out[k] = []string{unquote(v)}
		}
	}
	return out
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// isCategory tells an observation's [category] from a task box ([ ], [x]).
func isCategory(c string) bool {
	c = strings.TrimSpace(c)
	return c != "" && c != "x" && c != "X" && !strings.HasPrefix(c, "[")
}
