package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewStreamTransport is an MCP transport over a byte stream pair, such as a
// process's stdin and stdout, that answers every request it read before the
// input ended. The SDK's own stream transport ends the session at end of input
// and drops the answers still being worked on, so a scripted session
// (`printf '...' | mnemo mcp ...`) would lose its last answers; this one holds
// the end of input back until each request read has had its response written.
// Closing the session (an interrupt) stops the wait. A line that is not JSON
// is answered with JSON-RPC's parse error (-32700), and one that is JSON but
// not a JSON-RPC message with invalid request (-32600), as JSON-RPC 2.0 says;
// the SDK, which would end the session on either, never sees them, and the
// session goes on.
func NewStreamTransport(in io.Reader, out io.Writer) sdk.Transport {
	d := &drain{}
	d.cond = sync.NewCond(&d.mu)
	w := &answerCounter{w: out, d: d}
	return &sdk.IOTransport{
		Reader: &drainingReader{r: in, d: d, answer: w},
		Writer: w,
	}
}

// drain counts requests read and responses written.
type drain struct {
	mu       sync.Mutex
	cond     *sync.Cond
	asked    int
	answered int
	closed   bool
}

func (d *drain) add(asked, answered int) {
	if asked == 0 && answered == 0 {
		return
	}
	d.mu.Lock()
	d.asked += asked
	d.answered += answered
	d.mu.Unlock()
	d.cond.Broadcast()
}

// wait blocks until every request read has been answered or the session closed.
func (d *drain) wait() {
	d.mu.Lock()
	for d.answered < d.asked && !d.closed {
		d.cond.Wait()
	}
	d.mu.Unlock()
}

func (d *drain) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cond.Broadcast()
}

// drainingReader passes the input's messages through line by line, counting
// the requests in them, answers the lines that are not messages itself, and
// reports the input's end only once every request is answered.
type drainingReader struct {
	r      io.Reader
	d      *drain
	answer io.Writer
	// partial is an unfinished line; ready is what Read hands over next.
	partial []byte
	ready   []byte
	buf     [32 << 10]byte
	ended   bool
}

func (r *drainingReader) Read(p []byte) (int, error) {
	for len(r.ready) == 0 {
		if r.ended {
			r.d.wait()
			return 0, io.EOF
		}
		n, err := r.r.Read(r.buf[:])
		r.take(r.buf[:n])
		if err == io.EOF {
			// A last message without a newline is still a message.
			if len(bytes.TrimSpace(r.partial)) > 0 {
				r.line(r.partial)
			}
			r.partial = nil
			r.ended = true
		} else if err != nil {
			if len(r.ready) > 0 {
				break
			}
			return 0, err
		}
	}
	n := copy(p, r.ready)
	r.ready = r.ready[n:]
	return n, nil
}

// take splits a chunk of input into lines.
func (r *drainingReader) take(chunk []byte) {
	for {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			r.partial = append(r.partial, chunk...)
			return
		}
		if len(r.partial) > 0 {
			r.partial = append(r.partial, chunk[:i]...)
			r.line(r.partial)
			r.partial = r.partial[:0]
		} else {
			r.line(chunk[:i])
		}
		chunk = chunk[i+1:]
	}
}

// line passes a message on, or answers a line that is not one.
func (r *drainingReader) line(l []byte) {
	l = bytes.TrimSpace(l)
	if len(l) == 0 {
		return
	}
	if code, msg, id := refusal(l); code != 0 {
		if id != nil {
			r.d.add(1, 0) // the refusal below answers it
		}
		b, _ := json.Marshal(rpcError{Version: "2.0", ID: id, Error: rpcErrorBody{Code: code, Message: msg}})
		_, _ = r.answer.Write(append(b, '\n'))
		return
	}
	r.d.add(requestsIn(l), 0)
	r.ready = append(r.ready, l...)
	r.ready = append(r.ready, '\n')
}

// JSON-RPC 2.0's error codes for what is not a message.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

type rpcError struct {
	Version string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// refusal tells why a line is not a JSON-RPC message (code 0: it is one), and
// the id to answer with (nil: null).
func refusal(l []byte) (code int, msg string, id json.RawMessage) {
	if !json.Valid(l) {
		var v any
		err := json.Unmarshal(l, &v)
		return codeParseError, "Parse error: the line is not JSON (" + err.Error() + "); the session goes on", nil
	}
	var raws []json.RawMessage
	if l[0] == '[' {
		if json.Unmarshal(l, &raws) != nil || len(raws) == 0 {
			return codeInvalidRequest, "Invalid Request: an empty or malformed batch", nil
		}
	} else {
		raws = []json.RawMessage{l}
	}
	for _, raw := range raws {
		if _, err := jsonrpc.DecodeMessage(raw); err != nil {
			var f jsonrpcFrame
			if json.Unmarshal(raw, &f) == nil && hasID(f) && len(raws) == 1 {
				id = f.ID
			}
			return codeInvalidRequest, "Invalid Request: " + err.Error(), id
		}
	}
	return 0, "", nil
}

// Close wakes a wait for answers; the input itself belongs to the caller.
func (r *drainingReader) Close() error {
	r.d.close()
	return nil
}

// answerCounter passes the output through, counting the responses in it.
type answerCounter struct {
	w     io.Writer
	d     *drain
	mu    sync.Mutex
	lines lineScanner
}

func (w *answerCounter) Write(p []byte) (int, error) {
	w.mu.Lock()
	n, err := w.w.Write(p)
	answered := w.lines.feed(p[:n], responsesIn)
	w.mu.Unlock()
	w.d.add(0, answered)
	return n, err
}

// Close leaves the output open: it belongs to the caller.
func (w *answerCounter) Close() error {
	w.d.close()
	return nil
}

// lineScanner splits a stream into lines, keeping an unfinished one.
type lineScanner struct{ partial []byte }

// feed counts, with count, the messages in the lines chunk completes.
func (s *lineScanner) feed(chunk []byte, count func([]byte) int) int {
	total := 0
	for {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			s.partial = append(s.partial, chunk...)
			return total
		}
		if len(s.partial) > 0 {
			s.partial = append(s.partial, chunk[:i]...)
			total += count(s.partial)
			s.partial = s.partial[:0]
		} else {
			total += count(chunk[:i])
		}
		chunk = chunk[i+1:]
	}
}

// flush counts the unfinished line as a whole one.
func (s *lineScanner) flush(count func([]byte) int) int {
	n := 0
	if len(bytes.TrimSpace(s.partial)) > 0 {
		n = count(s.partial)
	}
	s.partial = nil
	return n
}

// jsonrpcFrame is enough of a JSON-RPC message to tell a request (id and
// method) from a response (id, no method) and a notification (no id).
type jsonrpcFrame struct {
	ID     json.RawMessage `json:"id"`
	Method *string         `json:"method"`
}

// frames decodes one line: a message or a batch of them.
func frames(line []byte) []jsonrpcFrame {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		var batch []jsonrpcFrame
		if json.Unmarshal(line, &batch) != nil {
			return nil
		}
		return batch
	}
	var f jsonrpcFrame
	if json.Unmarshal(line, &f) != nil {
		return nil
	}
	return []jsonrpcFrame{f}
}

func hasID(f jsonrpcFrame) bool { return len(f.ID) > 0 && string(f.ID) != "null" }

// requestsIn counts the requests (messages with an id and a method) in a line.
func requestsIn(line []byte) int {
	n := 0
	for _, f := range frames(line) {
		if hasID(f) && f.Method != nil {
			n++
		}
	}
	return n
}

// responsesIn counts the responses (messages with an id and no method) in a line.
func responsesIn(line []byte) int {
	n := 0
	for _, f := range frames(line) {
		if hasID(f) && f.Method == nil {
			n++
		}
	}
	return n
}
