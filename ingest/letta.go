package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"mnemo/contract"
)

// Letta reads a Letta agent file (.af): memory blocks become documents (the
// block's label is the title) and messages become conversations, one
// namespace per agent. Files whose JSON is encoded once more as a string are
// read too, as are files of the older single-agent layout (core_memory at the
// top level).
type Letta struct{}

// Name implements Source.
func (Letta) Name() string { return "letta" }

// Describe implements Source.
func (Letta) Describe() string {
	return "Letta agent file (.af, also JSON encoded twice): memory blocks and messages, a namespace per agent"
}

// Sniff implements Source.
func (Letta) Sniff(path string) bool {
	if isDir(path) {
		return false
	}
	if strings.HasSuffix(path, ".af") {
		return true
	}
	h := head(path, 64<<10)
	if bytes.HasPrefix(bytes.TrimSpace(h), []byte(`"`)) {
		return bytes.Contains(h, []byte(`\"agents\"`)) && bytes.Contains(h, []byte(`\"blocks\"`))
	}
	return bytes.Contains(h, []byte(`"agents"`)) && bytes.Contains(h, []byte(`"block_ids"`)) ||
		bytes.Contains(h, []byte(`"core_memory"`)) && bytes.Contains(h, []byte(`"agent_type"`))
}

type lettaFile struct {
	Agents []lettaAgent `json:"agents"`
	Blocks []lettaBlock `json:"blocks"`
	// the older single-agent layout
	lettaAgent
}

type lettaAgent struct {
	ID         string         `json:"id"`
	Name       string         `json:"name"`
	Tags       []string       `json:"tags"`
	BlockIDs   []string       `json:"block_ids"`
	CoreMemory []lettaBlock   `json:"core_memory"`
	Messages   []lettaMessage `json:"messages"`
}

type lettaBlock struct {
	ID          string   `json:"id"`
	Label       string   `json:"label"`
	Value       string   `json:"value"`
	Description string   `json:"description"`
	Tags        []string `json:"tags"`
}

type lettaMessage struct {
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Text      string          `json:"text"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
}

// Read implements Source.
func (Letta) Read(ctx context.Context, path string, sink Sink) error {
	data, err := readFile(path)
	if err != nil {
		return err
	}
	name := filepath.Base(path)
	t := bytes.TrimSpace(data)
	if len(t) > 0 && t[0] == '"' {
		var inner string
		if err := json.Unmarshal(t, &inner); err != nil {
			return contract.Invalid("%s is a JSON string that does not decode: %v", path, err)
		}
		t = []byte(inner)
	}
	var f lettaFile
	if err := json.Unmarshal(t, &f); err != nil {
		return contract.Invalid("%s is not a Letta agent file: %v", path, err)
	}
	agents := f.Agents
	if len(agents) == 0 && (len(f.CoreMemory) > 0 || len(f.Messages) > 0) {
		agents = []lettaAgent{f.lettaAgent}
	}
	if len(agents) == 0 && len(f.Blocks) == 0 {
		return contract.Invalid("%s holds no agents and no blocks", path)
	}
	blocks := map[string]lettaBlock{}
	used := map[string]bool{}
	for _, b := range f.Blocks {
		blocks[b.ID] = b
	}
	for i, a := range agents {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := a.ID
		if key == "" {
			key = fmt.Sprint(i)
		}
		agentName := a.Name
		if agentName == "" {
			agentName = key
		}
		space := ns("agent", agentName)
		where := fmt.Sprintf("%s#agents/%s", name, key)
		own := a.CoreMemory
		for _, id := range a.BlockIDs {
			b, ok := blocks[id]
			if !ok {
				sink.Skip(Skip{Location: where + "/block_ids/" + id, Reason: "names a block the file does not hold"})
				continue
			}
			used[id] = true
			own = append(own, b)
		}
		for _, b := range own {
			if err := lettaBlockRecord(b, space, a.Tags, where+"/blocks/"+b.Label, sink); err != nil {
				return err
			}
		}
		if err := lettaMessages(a, space, where, sink); err != nil {
			return err
		}
	}
	for _, b := range f.Blocks {
		if !used[b.ID] {
			if err := lettaBlockRecord(b, ns("source", "letta"), nil, name+"#blocks/"+b.ID, sink); err != nil {
				return err
			}
		}
	}
	return nil
}

func lettaBlockRecord(b lettaBlock, space contract.Namespace, agentTags []string, where string, sink Sink) error {
	if strings.TrimSpace(b.Value) == "" {
		sink.Omit("empty memory block")
		return nil
	}
	it := contract.Document(b.Value, contract.MemoryMeta{Namespace: space,
		Tags: uniq(append(append([]string{"letta", "block"}, agentTags...), b.Tags...))})
	label := b.Label
	if label == "" {
		label = b.ID
	}
	it.Title = contract.Ptr(label)
	return sink.Record(Record{Item: it, Location: where})
}

func lettaMessages(a lettaAgent, space contract.Namespace, where string, sink Sink) error {
	var turns []contract.Turn
	var ids []string
	var speakers []*contract.ObservedActor
	for i, m := range a.Messages {
		t, why, ok := lettaTurn(m)
		if !ok {
			if why != "" {
				sink.Omit(why)
			}
			continue
		}
		id := m.ID
		if id == "" {
			id = fmt.Sprint(i)
		}
		turns = append(turns, t)
		ids = append(ids, id)
		speakers = append(speakers, lettaSpeaker(a, m, t.Role))
	}
	if len(turns) == 0 {
		return nil
	}
	meta := contract.MemoryMeta{Namespace: space, Tags: []string{"letta", "messages"}}
	if a.ID != "" {
		meta.ThreadID = contract.Ptr(a.ID)
		meta.AgentID = contract.Ptr(a.ID)
	}
	return conversationRecords(turns, speakers, meta, func(i int) string { return where + "/messages/" + ids[i] }, sink)
}

// lettaSpeaker is who spoke a message: the agent (its id and name) for the
// assistant, the tool named by a tool return, else the role, named by the
// message's name when it has one.
func lettaSpeaker(a lettaAgent, m lettaMessage, role contract.Role) *contract.ObservedActor {
	switch role {
	case contract.RoleAssistant:
		id := a.ID
		if id == "" {
			id = string(role)
		}
		return speaker(id, a.Name)
	case contract.RoleTool:
		return speaker("tool", m.Name)
	}
	return speaker(string(role), m.Name)
}

// lettaTurn reads a message. User messages Letta wraps as
// {"type": "user_message", "message": ...} are unwrapped; heartbeats, login
// events and system messages are left out; an assistant's send_message call
// is its reply.
func lettaTurn(m lettaMessage) (contract.Turn, string, bool) {
	role, ok := contract.ParseRole(m.Role)
	if !ok {
		return contract.Turn{}, "message of role " + m.Role, false
	}
	if role == contract.RoleSystem {
		return contract.Turn{}, "system message (the agent's prompt)", false
	}
	text := m.Text
	if text == "" {
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		var s string
		if json.Unmarshal(m.Content, &parts) == nil {
			var texts []string
			for _, p := range parts {
				if strings.TrimSpace(p.Text) != "" {
					texts = append(texts, p.Text)
				}
			}
			text = strings.Join(texts, "\n\n")
		} else if json.Unmarshal(m.Content, &s) == nil {
			text = s
		}
	}
	var wrapped struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	if role == contract.RoleUser && json.Unmarshal([]byte(text), &wrapped) == nil && wrapped.Type != "" {
		if wrapped.Type != "user_message" {
			return contract.Turn{}, wrapped.Type + " event", false
		}
		text = wrapped.Message
	}
	t := contract.Turn{Role: role, At: parseTime(m.CreatedAt)}
	for _, c := range m.ToolCalls {
		if c.Function.Name == "send_message" {
			var args struct {
				Message string `json:"message"`
			}
			if json.Unmarshal([]byte(c.Function.Arguments), &args) == nil && args.Message != "" {
				text = args.Message // the reply; the content before it is inner monologue
				continue
			}
		}
		ref := contract.ToolCallRef{Name: c.Function.Name}
		if ref.Name == "" {
			ref.Name = "tool"
		}
		if c.ID != "" {
			ref.ID = contract.Ptr(c.ID)
		}
		t.ToolCalls = append(t.ToolCalls, ref)
		if text == "" {
			text = ref.Name + " " + clip(c.Function.Arguments, 500)
		}
	}
	if role == contract.RoleTool && m.Name == "send_message" {
		return contract.Turn{}, "send_message tool return", false
	}
	if role == contract.RoleTool {
		text = clip(text, 2000)
	}
	t.Text = strings.TrimSpace(text)
	if t.Text == "" {
		return contract.Turn{}, "message without text", false
	}
	return t, "", true
}
