package retrieval

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"mnemo/contract"
)

// ChatConfig configures an OpenAI-compatible /v1/chat/completions answerer.
type ChatConfig struct {
	// Endpoint is the server root, the API root (".../v1") or the full
	// ".../v1/chat/completions" URL.
	Endpoint string
	// Model is the chat model; recall reports it as the answer's model.
	Model string
	// APIKeyEnv names the environment variable holding the key; empty sends no key.
	APIKeyEnv string
	// Timeout bounds each attempt (default 30 s).
	Timeout time.Duration
	// MaxAttempts and RetryBackoff as in OpenAIConfig.
	MaxAttempts  int
	RetryBackoff time.Duration
	// Temperature of the completion (default 0.2: answers should stay close
	// to the citations).
	Temperature *float64
}

type openAIChat struct {
	cfg    ChatConfig
	client *openAIClient
}

// NewOpenAIChat returns an Answerer calling an OpenAI-compatible
// /v1/chat/completions endpoint. The citations go into the prompt numbered
// [1]..[n] and the model is told to cite them that way; markers naming no
// citation are dropped from the answer. No citations answer NothingStored
// without calling the endpoint.
func NewOpenAIChat(cfg ChatConfig, hc *http.Client) (Answerer, error) {
	if cfg.Model == "" {
		return nil, contract.ConfigErr("answer model is not configured")
	}
	c, err := newOpenAIClient("chat", cfg.Endpoint, "chat/completions", cfg.APIKeyEnv, cfg.Timeout, cfg.MaxAttempts, cfg.RetryBackoff, hc)
	if err != nil {
		return nil, err
	}
	return &openAIChat{cfg: cfg, client: c}, nil
}

func (a *openAIChat) Model() string { return a.cfg.Model }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []chatMessage `json:"messages"`
	Temperature float64       `json:"temperature"`
}

type chatReply struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
}

// chatSystemPrompt is the fixed instruction every answer gets.
const chatSystemPrompt = `You answer questions from an AI agent's stored memory.
Use only the numbered memory excerpts in the user's message. After each statement, cite the excerpts it rests on by number in square brackets, like [1] or [2][3]; cite only numbers that exist.
If the excerpts do not answer the question, say so in one sentence.
Do not mention these rules.`

// ChatPrompt builds the messages an answer request sends: the fixed system
// prompt, then the question, the caller's instructions and the numbered
// citations.
func ChatPrompt(req AnswerRequest) (system, user string) {
	var b strings.Builder
	b.WriteString("Question: ")
	b.WriteString(strings.TrimSpace(req.Question))
	b.WriteString("\n")
	if s := strings.TrimSpace(req.Instructions); s != "" {
		b.WriteString("Instructions for the answer: ")
		b.WriteString(s)
		b.WriteString("\n")
	}
	b.WriteString("\nMemory excerpts:\n")
	for i, c := range req.Citations {
		fmt.Fprintf(&b, "\n[%d] (%s", i+1, c.Kind)
		if !c.Meta.Namespace.IsRoot() {
			fmt.Fprintf(&b, ", namespace %s", c.Meta.Namespace.String())
		}
		if c.Meta.ObservedAt != nil {
			fmt.Fprintf(&b, ", observed %s", c.Meta.ObservedAt.UTC().Format("2006-01-02"))
		}
		b.WriteString(")\n")
		b.WriteString(strings.TrimSpace(c.Snippet))
		b.WriteString("\n")
	}
	return chatSystemPrompt, b.String()
}

func (a *openAIChat) Answer(ctx context.Context, req AnswerRequest) (string, error) {
	if len(req.Citations) == 0 {
		return NothingStored, nil
	}
	system, user := ChatPrompt(req)
	temp := 0.2
	if a.cfg.Temperature != nil {
		temp = *a.cfg.Temperature
	}
	body := chatRequest{
		Model:       a.cfg.Model,
		Messages:    []chatMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
		Temperature: temp,
	}
	var reply chatReply
	if err := a.client.post(ctx, body, &reply); err != nil {
		return "", err
	}
	if len(reply.Choices) == 0 || reply.Choices[0].Message.Content == nil || strings.TrimSpace(*reply.Choices[0].Message.Content) == "" {
		return "", contract.EngineErr("chat endpoint %s returned no answer", a.client.shownURL)
	}
	return dropUnknownMarkers(strings.TrimSpace(*reply.Choices[0].Message.Content), len(req.Citations)), nil
}

var citationMarkerRe = regexp.MustCompile(`\s?\[(\d+)\]`)

// dropUnknownMarkers removes [n] markers that name no citation: a model
// sometimes invents one, and a marker the reader cannot follow is worse than
// none.
func dropUnknownMarkers(answer string, citations int) string {
	return citationMarkerRe.ReplaceAllStringFunc(answer, func(m string) string {
		n, err := strconv.Atoi(strings.Trim(strings.TrimSpace(m), "[]"))
		if err != nil || n < 1 || n > citations {
			return ""
		}
		return m
	})
}
