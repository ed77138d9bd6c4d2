package eval

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var buildMan = flag.String("buildman", "", "rebuild "+manSetFile+" from the man page sources in this directory (e.g. /usr/share/man)")

// manWords caps a page's body: the first words of DESCRIPTION keep the
// checked-in set small and are where a page says what it is about.
const manWords = 250

// TestBuildManSet derives the man page set from the Linux man-pages project
// (Debian's manpages and manpages-dev, sections 2 to 7; SPDX
// Linux-man-pages-copyleft and others that allow redistribution). Pages that
// only point at another (.so, symlinks) and pages without a NAME description
// or a DESCRIPTION of 30 words are left out.
//
//	go test ./engine/retrieval/eval -run TestBuildManSet -buildman /usr/share/man
func TestBuildManSet(t *testing.T) {
	if *buildMan == "" {
		t.Skip("run with -buildman DIR")
	}
	var recs []manRecord
	seen := map[string]bool{}
	for _, sec := range []string{"2", "3", "4", "5", "7"} {
		files, _ := filepath.Glob(filepath.Join(*buildMan, "man"+sec, "*."+sec+"*.gz"))
		slices.Sort(files)
		for _, path := range files {
			if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSymlink != 0 {
				continue
			}
			raw, err := readGz(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(raw, []byte("Linux man-pages")) {
				continue // another package's page
			}
			names, desc, body := parseMan(string(raw))
			if desc == "" || len(strings.Fields(body)) < 30 {
				continue
			}
			if w := strings.Fields(body); len(w) > manWords {
				body = strings.Join(w[:manWords], " ")
			}
			key := strings.TrimSuffix(filepath.Base(path), ".gz")
			if seen[names+desc] {
				continue
			}
			seen[names+desc] = true
			recs = append(recs, manRecord{KnownDoc: KnownDoc{Key: key, Title: names, Body: body}, Query: desc})
		}
	}
	var out bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&out, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manSetFile, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pages, %d bytes", len(recs), out.Len())
}

func readGz(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

var (
	roffFont   = regexp.MustCompile(`\\f(\[[^\]]*\]|\(..|.)`)
	roffNamed  = regexp.MustCompile(`\\(\(..|\[[^\]]*\]|\*(\(..|\[[^\]]*\]|.))`)
	roffOther  = regexp.MustCompile(`\\[&%c:|^/,~0 ]`)
	fontMacros = map[string]bool{".B": true, ".I": true, ".SM": true, ".SB": true}
	altMacros  = map[string]bool{".BR": true, ".RB": true, ".IR": true, ".RI": true, ".BI": true, ".IB": true}
)

var roffGlyphs = map[string]string{
	`\(em`: " - ", `\(en`: "-", `\(aq`: "'", `\(dq`: `"`, `\(lq`: `"`, `\(rq`: `"`, `\(bu`: "*",
	`\[em]`: " - ", `\[en]`: "-", `\[aq]`: "'", `\[dq]`: `"`, `\[lq]`: `"`, `\[rq]`: `"`,
	`\*(lq`: `"`, `\*(rq`: `"`, `\(ti`: "~", `\(ha`: "^", `\(rs`: `\`, `\[rs]`: `\`,
}

// roffText strips roff escapes from one line of text.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\-`, "-")
	s = strings.ReplaceAll(s, `\e`, `\`)
	s = roffFont.ReplaceAllString(s, "")
	s = roffNamed.ReplaceAllStringFunc(s, func(m string) string { return roffGlyphs[m] })
	s = roffOther.ReplaceAllString(s, " ")
	return s
}

// roffArgs splits a macro's arguments, honouring double quotes.
func roffArgs(s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			end := strings.IndexByte(s[1:], '"')
			if end < 0 {
				out = append(out, s[1:])
				break
			}
			out = append(out, s[1:1+end])
			s = s[2+end:]
			continue
		}
		end := strings.IndexAny(s, " \t")
		if end < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// parseMan returns a page's NAME line as names and description, and the
// text of its DESCRIPTION section.
func parseMan(src string) (names, desc, body string) {
	var section string
	var name, descr []string
	inTable := false
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, `.\"`) || strings.HasPrefix(line, `'\"`) {
			continue
		}
		if strings.HasPrefix(line, ".TS") {
			inTable = true
			continue
		}
		if strings.HasPrefix(line, ".TE") {
			inTable = false
			continue
		}
		if inTable {
			continue
		}
		var text string
		if strings.HasPrefix(line, ".") {
			macro, rest, _ := strings.Cut(line, " ")
			switch {
			case macro == ".SH":
				section = strings.ToUpper(strings.Trim(strings.TrimSpace(rest), `"`))
				continue
			case fontMacros[macro]:
				text = strings.Join(roffArgs(rest), " ")
			case altMacros[macro]:
				text = strings.Join(roffArgs(rest), "")
			case macro == ".IP" || macro == ".TP":
				args := roffArgs(rest)
				if macro == ".IP" && len(args) > 0 && args[0] != `\(bu` && args[0] != "*" {
					text = args[0]
				}
			default:
				continue
			}
		} else {
			text = line
		}
		text = strings.TrimSpace(roffText(text))
		if text == "" {
			continue
		}
		switch section {
		case "NAME":
			name = append(name, text)
		case "DESCRIPTION":
			descr = append(descr, text)
		}
	}
	full := strings.Join(strings.Fields(strings.Join(name, " ")), " ")
	n, d, ok := strings.Cut(full, " - ")
	if !ok {
		return "", "", ""
	}
	return strings.TrimSpace(n), strings.TrimSpace(d), strings.Join(strings.Fields(strings.Join(descr, " ")), " ")
}
