package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"mnemo/contract"
	"mnemo/engine/memory"
)

// slowEngine makes every list wait, so answers are still being worked on when
// the input ends.
type slowEngine struct {
	contract.Engine
	delay time.Duration
}

func (s slowEngine) List(ctx context.Context, req contract.ListRequest) (contract.ListPage, error) {
	time.Sleep(s.delay)
	return s.Engine.List(ctx, req)
}

// lockedBuffer is an output stream read after the session ends.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestStreamAnswersEverythingReadBeforeTheEnd pipes a whole scripted session
// that ends at once, as `printf ... | mnemo mcp` does, and expects an answer
// to every request.
func TestStreamAnswersEverythingReadBeforeTheEnd(t *testing.T) {
	t.Parallel()
	e := slowEngine{Engine: memory.New(), delay: 50 * time.Millisecond}
	lines := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	}
	const calls = 5
	for i := range calls {
		lines = append(lines, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"memory_list","arguments":{}}}`, 10+i))
	}
	// The last request has no newline: still a request.
	in := strings.Join(lines, "\n") + "\n" + `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"memory_get","arguments":{"ids":["x"]}}}`
	var out lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), New(e, ScopeAt(placeNS)), NewStreamTransport(strings.NewReader(in), &out), ServerOptions{})
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the session did not end after its input did")
	}
	answered := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &msg); err != nil {
			t.Fatalf("output line is not JSON: %q", sc.Text())
		}
		answered[string(msg.ID)] = string(msg.Result)
	}
	for _, id := range []string{"1", "10", "11", "12", "13", "14", "99"} {
		if _, ok := answered[id]; !ok {
			t.Errorf("request %s was never answered; output:\n%s", id, out.String())
		}
	}
	if !strings.Contains(answered["99"], `\"missing\":[\"x\"]`) {
		t.Errorf("get answer = %s", answered["99"])
	}
}

func TestLineCounting(t *testing.T) {
	var s lineScanner
	got := s.feed([]byte(`{"id":1,"method":"a"}`+"\n"+`{"method":"note"}`+"\n"+`[{"id":2,"method":"b"},{"id":3,"method":"c"}]`+"\n"+`{"id":4,`), requestsIn)
	if got != 3 {
		t.Errorf("requests in the complete lines = %d, want 3", got)
	}
	if got := s.feed([]byte(`"method":"d"}`+"\n"), requestsIn); got != 1 {
		t.Errorf("a request split across reads counted %d times", got)
	}
	if got := responsesIn([]byte(`{"id":7,"result":{}}`)) + responsesIn([]byte(`{"id":null,"error":{}}`)) + responsesIn([]byte(`not json`)); got != 1 {
		t.Errorf("responses = %d, want 1 (a null id answers nothing read)", got)
	}
}

// TestStreamAnswersALineThatIsNotAMessage: JSON-RPC 2.0 answers a line that is
// not JSON with a parse error (-32700, id null) and JSON that is not a message
// with invalid request (-32600), and the session goes on to answer what
// follows.
func TestStreamAnswersALineThatIsNotAMessage(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`oops`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"1.0","id":3,"method":"tools/list"}`,
		`42`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_get","arguments":{"ids":["x"]}}}`,
	}, "\n") + "\n"
	var out lockedBuffer
	err := Serve(context.Background(), New(memory.New(), ScopeAt(placeNS)), NewStreamTransport(strings.NewReader(in), &out), ServerOptions{})
	if err != nil && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("the session ended with %v", err)
	}
	type answer struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	var got []answer
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatalf("output line is not JSON: %q", sc.Text())
		}
		got = append(got, a)
	}
	codes := map[string][]int{}
	results := map[string]bool{}
	for _, a := range got {
		if a.Error != nil {
			codes[string(a.ID)] = append(codes[string(a.ID)], a.Error.Code)
		} else {
			results[string(a.ID)] = true
		}
	}
	if c := codes["null"]; len(c) != 2 || c[0] != -32700 || c[1] != -32600 {
		t.Errorf("answers with id null: %v; want a parse error (-32700) for `oops`, then invalid request (-32600) for `42`\n%s", c, out.String())
	}
	if c := codes["3"]; len(c) != 1 || c[0] != -32600 {
		t.Errorf("a request of JSON-RPC 1.0 answered %v; want -32600 with its id", c)
	}
	for _, id := range []string{"1", "2", "4"} {
		if !results[id] {
			t.Errorf("request %s after the bad lines was not answered:\n%s", id, out.String())
		}
	}
}
