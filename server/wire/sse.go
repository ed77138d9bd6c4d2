package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"mnemo/contract"
)

// The change feed's stream form (GET /v1/changes with Accept:
// text/event-stream) is Server-Sent Events: one event per page of changes,
//
//	id: <the page's next>
//	event: changes
//	data: <the page's JSON, as the long poll answers it>
//
// an empty page when nothing happened for the wait (a heartbeat that says
// where to resume), and, when the stream ends on an error the client should
// know of (since past retention, the server stopping, a revoked token), one
// event "error" whose data is the error envelope. Every other end of the
// stream (a dropped connection, a client too slow to take its events) is a
// cue to resume from the last id with since.
const (
	// EventStreamType is the media type of the stream.
	EventStreamType = "text/event-stream"
	// EventChanges is the event of one page of changes.
	EventChanges = "changes"
	// EventError is the event that ends a stream on an error.
	EventError = "error"
	// LastEventID is the header a reconnecting EventSource sends: the since
	// to resume from, when the query names none.
	LastEventID = "Last-Event-ID"
)

// Event is one Server-Sent Event.
type Event struct {
	// Event is the event's type ("" when the event names none: a "message").
	Event string
	// ID is the event's id, "" when it had none.
	ID string
	// Data is the event's data, its lines joined with '\n'.
	Data []byte
}

// AppendEvent appends the frame of one event to dst. A data holding line
// breaks is written as several data lines, which a reader joins again with
// '\n'; the event type and id must hold none (they are left out otherwise).
func AppendEvent(dst []byte, ev Event) []byte {
	if ev.ID != "" && !strings.ContainsAny(ev.ID, "\r\n\x00") {
		dst = append(dst, "id: "...)
		dst = append(dst, ev.ID...)
		dst = append(dst, '\n')
	}
	if ev.Event != "" && !strings.ContainsAny(ev.Event, "\r\n") {
		dst = append(dst, "event: "...)
		dst = append(dst, ev.Event...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	return appendData(dst, ev.Data)
}

// AppendJSONEvent appends the frame of an event whose data is the JSON
// add appends to dst (JSON on one line, as encoding/json and the page
// encoder write it, is sent as it is; one with line breaks as AppendEvent
// sends it), with no copy of the data.
func AppendJSONEvent(dst []byte, event, id string, add func([]byte) ([]byte, error)) ([]byte, error) {
	// The frame of an empty event, less the ends of its data line and of
	// the event: "...data: ".
	dst = AppendEvent(dst, Event{Event: event, ID: id})
	dst = dst[:len(dst)-2]
	start := len(dst)
	dst, err := add(dst)
	if err != nil {
		return dst, err
	}
	if data := dst[start:]; bytes.IndexByte(data, '\n') >= 0 || bytes.IndexByte(data, '\r') >= 0 {
		data = bytes.Clone(data)
		return appendData(dst[:start], data), nil
	}
	return append(dst, '\n', '\n'), nil
}

// appendData appends data after a "data: " and ends the event: each line
// break starts another data line.
func appendData(dst, data []byte) []byte {
	for {
		i := lineBreak(data)
		if i < 0 {
			dst = append(dst, data...)
			break
		}
		dst = append(dst, data[:i]...)
		dst = append(dst, "\ndata: "...)
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	return append(dst, '\n', '\n')
}

// lineBreak is the index of the first CR or LF in b, or -1.
func lineBreak(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if j := bytes.IndexByte(b, '\r'); j >= 0 && (i < 0 || j < i) {
		return j
	}
	return i
}

// ErrEventTooLarge is the error of an event longer than the reader's bound.
var ErrEventTooLarge = errors.New("a server-sent event is larger than this client reads")

// EventReader reads Server-Sent Events from a stream (the WHATWG parsing
// rules: lines end with LF, CRLF or CR; "field: value" or "field:value";
// lines starting with ':' are comments; unknown fields are ignored; an event
// is dispatched at an empty line when it has data, and the last id carries
// over to the events after it). An event not ended by an empty line when the
// stream ends is dropped, never returned: a cut stream yields only whole
// events.
type EventReader struct {
	r   *bufio.Reader
	max int
	// lastID is the last id seen.
	lastID string
	// buf[off:] is what is left of the last chunk read (lines to take).
	buf []byte
	off int
	// eof: the stream ended after buf.
	eof bool
}

// NewEventReader reads events of at most max bytes (their lines, framing
// included) from r.
func NewEventReader(r io.Reader, max int) *EventReader {
	return &EventReader{r: bufio.NewReaderSize(r, 32<<10), max: max}
}

// Next returns the next whole event. At the end of the stream it returns
// io.EOF when nothing was pending and io.ErrUnexpectedEOF when an event was
// cut; an event over the bound is ErrEventTooLarge. The event's Data is its
// own (not reused by later calls).
func (er *EventReader) Next() (Event, error) {
	ev := Event{ID: er.lastID}
	var data []byte
	hasData, pending, size := false, false, 0
	for {
		line, err := er.nextLine()
		if err != nil {
			if err == io.EOF && pending {
				err = io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		size += len(line) + 1
		if size > er.max {
			return Event{}, ErrEventTooLarge
		}
		if len(line) > 0 {
			pending = true
			er.field(line, &ev, &data, &hasData)
			continue
		}
		er.lastID = ev.ID
		if hasData {
			ev.Data = data[:len(data)-1]
			return ev, nil
		}
		// An event without data is not dispatched (its id still counts).
		ev.Event, pending, size = "", false, 0
	}
}

// field applies one line of an event.
func (er *EventReader) field(line []byte, ev *Event, data *[]byte, hasData *bool) {
	if line[0] == ':' {
		return
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		value = bytes.TrimPrefix(value, []byte{' '})
	}
	switch string(name) {
	case "event":
		ev.Event = string(value)
	case "data":
		if *data == nil {
			*data = make([]byte, 0, len(value)+1)
		}
		*data = append(*data, value...)
		*data = append(*data, '\n')
		*hasData = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			ev.ID = string(value)
		}
	}
}

// nextLine returns the next line without its end (valid until the next call).
func (er *EventReader) nextLine() ([]byte, error) {
	for {
		if rest := er.buf[er.off:]; len(rest) > 0 {
			if i := lineBreak(rest); i >= 0 {
				adv := i + 1
				if rest[i] == '\r' && i+1 < len(rest) && rest[i+1] == '\n' {
					adv++
				}
				er.off += adv
				return rest[:i], nil
			}
			// A line without its end: the stream was cut in it.
			if er.eof {
				er.buf, er.off = er.buf[:0], 0
				return nil, io.ErrUnexpectedEOF
			}
		}
		if er.eof {
			return nil, io.EOF
		}
		if err := er.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads the next chunk: up to and including a '\n', or to the end of
// the stream. A chunk never exceeds the event bound.
func (er *EventReader) fill() error {
	er.buf, er.off = er.buf[:0], 0
	for {
		b, err := er.r.ReadSlice('\n')
		if len(er.buf)+len(b) > er.max {
			return ErrEventTooLarge
		}
		er.buf = append(er.buf, b...)
		switch err {
		case nil:
			return nil
		case bufio.ErrBufferFull:
		case io.EOF:
			er.eof = true
			return nil
		default:
			return err
		}
	}
}

// StreamError reads the error an "error" event carries (the error envelope).
func StreamError(data []byte) *contract.Error {
	if e, ok := DecodeError(data); ok {
		return e
	}
	return contract.EngineErr("the server ended the change stream with an error this client cannot read: %s", fmt.Sprintf("%.200q", data))
}
