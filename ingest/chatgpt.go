package ingest

import (
	"bufio"
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

// ChatGPT reads a ChatGPT data export's conversations.json (or the folder
// holding it): one conversation per entry, of which only the branch from
// current_node back to the root is imported (edited-away branches are not).
type ChatGPT struct{}

// Name implements Source.
func (ChatGPT) Name() string { return "chatgpt" }

// Describe implements Source.
func (ChatGPT) Describe() string {
	return "ChatGPT data export: conversations.json (or its folder); the current branch of each conversation"
}

func chatgptFile(path string) string {
	if isDir(path) {
		return filepath.Join(path, "conversations.json")
	}
	return path
}

// Sniff implements Source.
func (ChatGPT) Sniff(path string) bool {
	h := head(chatgptFile(path), 64<<10)
	t := bytes.TrimSpace(h)
	return len(t) > 0 && t[0] == '[' && bytes.Contains(h, []byte(`"mapping"`)) && bytes.Contains(h, []byte(`"current_node"`))
}

type chatgptConversation struct {
	ID             string                 `json:"id"`
	ConversationID string                 `json:"conversation_id"`
	Title          string                 `json:"title"`
	CreateTime     float64                `json:"create_time"`
	CurrentNode    string                 `json:"current_node"`
	Mapping        map[string]chatgptNode `json:"mapping"`
}

type chatgptNode struct {
	Parent  *string         `json:"parent"`
	Message *chatgptMessage `json:"message"`
}

type chatgptMessage struct {
	Author struct {
		Role string `json:"role"`
		Name string `json:"name"`
	} `json:"author"`
	CreateTime *float64 `json:"create_time"`
	Content    struct {
		ContentType string            `json:"content_type"`
		Parts       []json.RawMessage `json:"parts"`
		Text        string            `json:"text"`
	} `json:"content"`
	Metadata struct {
		Hidden bool `json:"is_visually_hidden_from_conversation"`
	} `json:"metadata"`
}

// Read implements Source.
func (ChatGPT) Read(ctx context.Context, path string, sink Sink) error {
	file := chatgptFile(path)
	f, err := os.Open(file)
	if err != nil {
		return contract.Invalid("cannot read %s: %v", file, unwrapPath(err))
	}
	defer f.Close()
	name := filepath.Base(file)
	// Streamed one conversation at a time: an export can be hundreds of MB.
	dec := json.NewDecoder(bufio.NewReaderSize(f, 256<<10))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return contract.Invalid("%s is not a ChatGPT conversations.json (a JSON array of conversations)", file)
	}
	for i := 0; dec.More(); i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var r json.RawMessage
		if err := dec.Decode(&r); err != nil {
			return contract.Invalid("%s is not valid JSON after conversation %d (byte %d): %v", file, i, dec.InputOffset(), err)
		}
		where := fmt.Sprintf("%s$[%d]", name, i)
		var c chatgptConversation
		if err := json.Unmarshal(r, &c); err != nil {
			sink.Skip(Skip{Location: where, Reason: "not a conversation: " + err.Error()})
			continue
		}
		id := c.ID
		if id == "" {
			id = c.ConversationID
		}
		if id != "" {
			where = name + "#" + id
		}
		turns, nodes, speakers, err := chatgptBranch(c)
		if err != nil {
			sink.Skip(Skip{Location: where, Reason: err.Error()})
			continue
		}
		if len(turns) == 0 {
			sink.Skip(Skip{Location: where, Reason: "no message with text on the current branch"})
			continue
		}
		meta := contract.MemoryMeta{Namespace: ns("source", "chatgpt"), Tags: []string{"chatgpt"}}
		if id != "" {
			meta.ThreadID = contract.Ptr(id)
		}
		if err := conversationRecords(turns, speakers, meta, func(i int) string { return where + "/" + nodes[i] }, sink); err != nil {
			return err
		}
	}
	return nil
}

// chatgptBranch walks from current_node to the root and returns the turns in
// order, with the node id and the speaker of each.
func chatgptBranch(c chatgptConversation) ([]contract.Turn, []string, []*contract.ObservedActor, error) {
	if c.CurrentNode == "" {
		return nil, nil, nil, errf("no current_node")
	}
	if _, ok := c.Mapping[c.CurrentNode]; !ok {
		return nil, nil, nil, errf("current_node %q is not in mapping", c.CurrentNode)
	}
	var turns []contract.Turn
	var nodes []string
	var speakers []*contract.ObservedActor
	seen := map[string]bool{}
	for id := c.CurrentNode; id != ""; {
		if seen[id] {
			return nil, nil, nil, errf("mapping has a cycle at node %q", id)
		}
		seen[id] = true
		n, ok := c.Mapping[id]
		if !ok {
			return nil, nil, nil, errf("node %q names a parent that is not in mapping", id)
		}
		if t, ok := chatgptTurn(n.Message); ok {
			turns = append(turns, t)
			nodes = append(nodes, id)
			speakers = append(speakers, chatgptSpeaker(n.Message))
		}
		if n.Parent == nil {
			break
		}
		id = *n.Parent
	}
	slices.Reverse(turns)
	slices.Reverse(nodes)
	slices.Reverse(speakers)
	return turns, nodes, speakers, nil
}

// chatgptSpeaker is a message's author: its role as the id, author.name as
// the name (a tool's name, or a named participant), else "ChatGPT" for the
// assistant. The export does not name the user.
func chatgptSpeaker(m *chatgptMessage) *contract.ObservedActor {
	name := m.Author.Name
	if name == "" && m.Author.Role == string(contract.RoleAssistant) {
		name = "ChatGPT"
	}
	return speaker(m.Author.Role, name)
}

func chatgptTurn(m *chatgptMessage) (contract.Turn, bool) {
	if m == nil || m.Metadata.Hidden {
		return contract.Turn{}, false
	}
	role, ok := contract.ParseRole(m.Author.Role)
	if !ok {
		return contract.Turn{}, false
	}
	var texts []string
	for _, p := range m.Content.Parts {
		var s string
		if json.Unmarshal(p, &s) == nil && strings.TrimSpace(s) != "" {
			texts = append(texts, s)
		}
	}
	if len(texts) == 0 && strings.TrimSpace(m.Content.Text) != "" {
		texts = append(texts, m.Content.Text)
	}
	if len(texts) == 0 {
		return contract.Turn{}, false
	}
	t := contract.Turn{Role: role, Text: strings.Join(texts, "\n\n")}
	if m.CreateTime != nil {
		t.At = unixTime(*m.CreateTime)
	}
	return t, true
}
