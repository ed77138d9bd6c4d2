package wire

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"mnemo/contract"
)

func readAll(t *testing.T, r io.Reader, max int) ([]Event, error) {
	t.Helper()
	er := NewEventReader(r, max)
	var out []Event
	for {
		ev, err := er.Next()
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

func TestEventReaderFollowsTheParsingRules(t *testing.T) {
	in := ": a comment first\n" +
		"data: YHOO\ndata: +2\ndata: 10\n\n" + // lines joined with LF
		"event: changes\r\nid: 7\r\ndata:no space\r\n\r\n" + // CRLF, no space after the colon
		"data: carried id\rdata\r\r" + // lone CRs; "data" alone is an empty data line
		"id: 9\nevent: nothing\n\n" + // no data: not dispatched, but the id counts
		"retry: 10\nunknown: x\ndata:  two spaces\n\n" +
		"data: cut before its end"
	got, err := readAll(t, strings.NewReader(in), 1<<10)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a cut event: %v", err)
	}
	want := []Event{
		{Data: []byte("YHOO\n+2\n10")},
		{Event: "changes", ID: "7", Data: []byte("no space")},
		{ID: "7", Data: []byte("carried id\n")},
		{ID: "9", Data: []byte(" two spaces")},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events: %+v", len(got), got)
	}
	for i := range want {
		if got[i].Event != want[i].Event || got[i].ID != want[i].ID || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("event %d: %+v %q, want %+v %q", i, got[i], got[i].Data, want[i], want[i].Data)
		}
	}
}

func TestEventReaderEnds(t *testing.T) {
	if got, err := readAll(t, strings.NewReader("data: x\n\n"), 100); err != io.EOF || len(got) != 1 {
		t.Fatalf("a whole stream: %+v %v", got, err)
	}
	// An event whose end is cut is never returned, wherever the cut falls.
	whole := string(AppendEvent(nil, Event{Event: EventChanges, ID: "12", Data: []byte(`{"changes":[],"next":12}`)}))
	for i := 1; i < len(whole); i++ {
		got, err := readAll(t, strings.NewReader(whole[:i]), 100)
		if len(got) != 0 || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut at %d: %+v %v", i, got, err)
		}
	}
	// One byte at a time reads the same.
	got, err := readAll(t, iotest.OneByteReader(strings.NewReader(whole+whole)), 100)
	if err != io.EOF || len(got) != 2 || string(got[1].Data) != `{"changes":[],"next":12}` {
		t.Fatalf("one byte at a time: %+v %v", got, err)
	}
	// An event over the bound is an error, not an allocation.
	big := "data: " + strings.Repeat("x", 100<<10) + "\n\n"
	if _, err := readAll(t, strings.NewReader(big), 64<<10); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("an event over the bound: %v", err)
	}
	many := strings.Repeat("data: x\n", 20<<10) + "\n"
	if _, err := readAll(t, strings.NewReader(many), 64<<10); !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("many lines over the bound: %v", err)
	}
	if _, err := readAll(t, iotest.ErrReader(io.ErrClosedPipe), 100); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("a failing reader: %v", err)
	}
}

func TestAppendEventRoundTrips(t *testing.T) {
	evs := []Event{
		{Event: EventChanges, ID: "42", Data: []byte(`{"changes":[{"seq":42}],"next":42,"head":42,"floor":0}`)},
		{Event: EventError, Data: []byte("two\nlines\r\nand\rthree")},
		{Data: []byte("")},
	}
	var b []byte
	for _, ev := range evs {
		b = AppendEvent(b, ev)
	}
	got, err := readAll(t, bytes.NewReader(b), 1<<10)
	if err != io.EOF || len(got) != 3 {
		t.Fatalf("%q: %+v %v", b, got, err)
	}
	if string(got[0].Data) != string(evs[0].Data) || got[0].ID != "42" || got[0].Event != EventChanges {
		t.Errorf("the page: %+v", got[0])
	}
	if string(got[1].Data) != "two\nlines\nand\nthree" || got[1].ID != "42" {
		t.Errorf("line breaks: %q (id %q)", got[1].Data, got[1].ID)
	}
	if len(got[2].Data) != 0 {
		t.Errorf("empty data: %q", got[2].Data)
	}
}

func TestStreamError(t *testing.T) {
	e := StreamError([]byte(`{"error":{"kind":"expired","message":"changes after seq 3 are no longer kept"}}`))
	if e.Kind != contract.KindExpired || e.Message != "changes after seq 3 are no longer kept" {
		t.Fatalf("%+v", e)
	}
	if e := StreamError([]byte("<html>")); e.Kind != contract.KindEngine || !strings.Contains(e.Message, "cannot read") {
		t.Fatalf("%+v", e)
	}
}

// FuzzEventReader: any input reads without a panic, within the bound, and
// ends; an event written by AppendEvent reads back as written (its line
// breaks as LF).
func FuzzEventReader(f *testing.F) {
	f.Add([]byte("data: YHOO\ndata: +2\n\nid: 3\r\nevent: x\r\ndata\r\r: c\n"), "changes", "7", []byte("a\nb"))
	f.Add([]byte("\r\r\n\n:\ndata:\n\n"), "", "", []byte(""))
	f.Add([]byte(strings.Repeat("data: x", 300)), "error", "1\x00", []byte("\r\n\r"))
	f.Fuzz(func(t *testing.T, in []byte, event, id string, data []byte) {
		const max = 1 << 10
		er := NewEventReader(bytes.NewReader(in), max)
		for range len(in) + 1 {
			ev, err := er.Next()
			if err != nil {
				break
			}
			if len(ev.Data) > max || len(ev.ID) > max || len(ev.Event) > max {
				t.Fatalf("an event over the bound: %d bytes", len(ev.Data))
			}
		}
		if _, err := er.Next(); err == nil {
			t.Fatalf("%q: more events than bytes", in)
		}
		b := AppendEvent(nil, Event{Event: event, ID: id, Data: data})
		got, err := NewEventReader(bytes.NewReader(b), 1<<20).Next()
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		norm := bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
		if !bytes.Equal(got.Data, norm) {
			t.Fatalf("%q: data %q, want %q", b, got.Data, norm)
		}
		if !strings.ContainsAny(event, "\r\n") && got.Event != event {
			t.Fatalf("%q: event %q, want %q", b, got.Event, event)
		}
		if !strings.ContainsAny(id, "\r\n\x00") && got.ID != id {
			t.Fatalf("%q: id %q, want %q", b, got.ID, id)
		}
	})
}

func TestAppendJSONEvent(t *testing.T) {
	for _, data := range []string{`{"changes":[],"next":3}`, "{\n\"a\": 1\r\n}", ""} {
		b, err := AppendJSONEvent([]byte("before\n\n"), EventChanges, "3", func(dst []byte) ([]byte, error) { return append(dst, data...), nil })
		if err != nil {
			t.Fatal(err)
		}
		want := "before\n\n" + string(AppendEvent(nil, Event{Event: EventChanges, ID: "3", Data: []byte(data)}))
		if string(b) != want {
			t.Errorf("%q: %q, want %q", data, b, want)
		}
	}
	if _, err := AppendJSONEvent(nil, EventChanges, "", func(dst []byte) ([]byte, error) { return dst, io.ErrShortWrite }); err != io.ErrShortWrite {
		t.Fatalf("a failing encoder: %v", err)
	}
}

func BenchmarkEventReader(b *testing.B) {
	page := []byte(`{"changes":[` + strings.Repeat(`{"seq":1,"at":"2026-12-01T18:00:00.000Z","op":"store","id":"r1","namespace":"team:load","status":"active","record":{"text":"`+strings.Repeat("x", 800)+`"}},`, 40) + `{}],"next":1,"head":1,"floor":0}`)
	frame := AppendEvent(nil, Event{Event: EventChanges, ID: "1", Data: page})
	stream := bytes.Repeat(frame, 100)
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		er := NewEventReader(bytes.NewReader(stream), 1<<20)
		for {
			if _, err := er.Next(); err != nil {
				break
			}
		}
	}
}

// TestEventDataIsItsOwn: an event's data is not changed by reading the
// events after it, whether it was one data line (read in place) or several,
// short or longer than the reader's buffer, read whole or a byte at a time.
func TestEventDataIsItsOwn(t *testing.T) {
	var stream []byte
	var want [][]byte
	for i := range 40 {
		data := bytes.Repeat([]byte{byte('a' + i%26)}, 1+i*1700) // up to 66 KB
		if i%3 == 1 {
			data = append(append(data, '\n'), "second line"...)
		}
		want = append(want, data)
		stream = AppendEvent(stream, Event{Event: EventChanges, ID: "7", Data: data})
		stream = append(stream, ": a comment between events\nid: 8\n\n"...)
	}
	for name, r := range map[string]func() io.Reader{
		"whole":       func() io.Reader { return bytes.NewReader(stream) },
		"byte a time": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(stream)) },
	} {
		got, err := readAll(t, r(), 1<<20)
		if err != io.EOF {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d events, want %d", name, len(got), len(want))
		}
		for i := range want {
			if !bytes.Equal(got[i].Data, want[i]) {
				t.Fatalf("%s: event %d's data changed: %d bytes starting %q, want %d bytes", name, i, len(got[i].Data), got[i].Data[:min(len(got[i].Data), 20)], len(want[i]))
			}
		}
	}
}
