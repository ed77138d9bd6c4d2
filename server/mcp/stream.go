package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewStreamTransport is an MCP transport over a byte stream pair, such as a
// process's stdin and stdout, that answers every request it read before the
// input ended. The SDK's own stream transport ends the session at end of input
// and drops the answers still being worked on, so a scripted session
// (`printf '...' | mnemo mcp ...`) would lose its last answers; this one holds
// the end of input back until each request read has had its response written.
// Closing the session (an interrupt) stops the wait.
func NewStreamTransport(in io.Reader, out io.Writer) sdk.Transport {
	d := &drain{}
	d.cond = sync.NewCond(&d.mu)
	return &sdk.IOTransport{
		Reader: &drainingReader{r: in, d: d},
		Writer: &answerCounter{w: out, d: d},
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

// drainingReader passes the input through, counting the requests in it, and
// reports its end only once they are all answered.
type drainingReader struct {
	r     io.Reader
	d     *drain
	lines lineScanner
}

func (r *drainingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.d.add(r.lines.feed(p[:n], requestsIn), 0)
	if err == io.EOF {
		if n > 0 {
			// Let the decoder take these bytes first; the end comes next call.
			return n, nil
		}
		// A last message without a newline is still a message.
		r.d.add(r.lines.flush(requestsIn), 0)
		r.d.wait()
	}
	return n, err
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
	n, err := w.w.Write(p)
	w.mu.Lock()
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
