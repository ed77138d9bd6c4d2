package retrieval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"mnemo/contract"
)

// Defaults of the OpenAI-compatible clients.
const (
	DefaultOpenAITimeout   = 30 * time.Second
	DefaultEmbedBatchSize  = 64
	DefaultMaxAttempts     = 4
	DefaultRetryBackoff    = 250 * time.Millisecond
	maxRetryAfter          = 20 * time.Second
	maxReplyBytes          = 64 << 20
	maxServerMessageLength = 200
)

// openAIClient is the transport both clients share: one JSON POST with the
// bearer key, a timeout per attempt and retries with exponential backoff on
// transient failures (429, 5xx, timeouts, refused connections), none on other
// 4xx. It is careful that the key never reaches an error: messages name the
// endpoint without user info or query and scrub the key from anything the
// server says.
type openAIClient struct {
	what        string // "embedding" or "chat", for messages
	url         string
	shownURL    string
	keyEnv      string
	key         string
	timeout     time.Duration
	maxAttempts int
	backoff     time.Duration
	hc          *http.Client
}

func newOpenAIClient(what, endpoint, suffix, keyEnv string, timeout time.Duration, maxAttempts int, backoff time.Duration, hc *http.Client) (*openAIClient, error) {
	if strings.TrimSpace(endpoint) == "" {
		return nil, contract.ConfigErr("%s endpoint is not configured", what)
	}
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, contract.ConfigErr("%s endpoint must be an http or https URL", what)
	}
	u.Path = endpointPath(u.Path, suffix)
	shown := *u
	shown.User = nil
	shown.RawQuery = ""
	shown.Fragment = ""
	c := &openAIClient{
		what: what, url: u.String(), shownURL: shown.String(), keyEnv: keyEnv,
		timeout: timeout, maxAttempts: maxAttempts, backoff: backoff, hc: hc,
	}
	if keyEnv != "" {
		c.key = os.Getenv(keyEnv)
		if c.key == "" {
			return nil, contract.ConfigErr("%s API key: environment variable %s is not set", what, keyEnv)
		}
	}
	if c.timeout <= 0 {
		c.timeout = DefaultOpenAITimeout
	}
	if c.maxAttempts <= 0 {
		c.maxAttempts = DefaultMaxAttempts
	}
	if c.backoff <= 0 {
		c.backoff = DefaultRetryBackoff
	}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	return c, nil
}

// endpointPath accepts a server root ("http://host:11434"), an API root
// (".../v1") or the full operation path (".../v1/embeddings").
func endpointPath(path, suffix string) string {
	p := strings.TrimRight(path, "/")
	switch {
	case strings.HasSuffix(p, "/"+suffix):
		return p
	case strings.HasSuffix(p, "/v1"):
		return p + "/" + suffix
	}
	return p + "/v1/" + suffix
}

// attemptError is the outcome of one failed attempt.
type attemptError struct {
	err        *contract.Error
	transient  bool
	retryAfter time.Duration
}

// post sends body and decodes the reply into out, retrying transient failures.
func (c *openAIClient) post(ctx context.Context, body any, out any) error {
	payload, err := json.Marshal(body)
	if err != nil {
		return contract.EngineErr("%s request could not be encoded: %w", c.what, err)
	}
	var last *attemptError
	for attempt := 1; attempt <= c.maxAttempts; attempt++ {
		if attempt > 1 {
			wait := c.backoff << (attempt - 2)
			wait += time.Duration(rand.Int64N(int64(wait)/2 + 1))
			if last.retryAfter > wait {
				wait = min(last.retryAfter, maxRetryAfter)
			}
			select {
			case <-ctx.Done():
				return c.cancelled(ctx)
			case <-time.After(wait):
			}
		}
		last = c.attempt(ctx, payload, out)
		if last == nil {
			return nil
		}
		if ctx.Err() != nil {
			return c.cancelled(ctx)
		}
		if !last.transient {
			return last.err
		}
	}
	return contract.Unavailable("%s after %d attempts", last.err.Message, c.maxAttempts)
}

func (c *openAIClient) cancelled(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return contract.Unavailable("%s endpoint %s: the caller's deadline passed", c.what, c.shownURL)
	}
	return contract.Unavailable("%s endpoint %s: request cancelled", c.what, c.shownURL)
}

func (c *openAIClient) attempt(ctx context.Context, payload []byte, out any) *attemptError {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return &attemptError{err: contract.ConfigErr("%s endpoint %s: %s", c.what, c.shownURL, c.scrub(err.Error()))}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return c.transportError(actx, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return c.transportError(actx, err)
	}
	if resp.StatusCode/100 != 2 {
		return c.statusError(resp, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &attemptError{err: contract.EngineErr("%s endpoint %s returned a malformed reply: %s", c.what, c.shownURL, c.scrub(err.Error()))}
	}
	return nil
}

func (c *openAIClient) transportError(actx context.Context, err error) *attemptError {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // the url.Error text repeats the full URL, query included
	}
	var ne net.Error
	switch {
	case errors.Is(actx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return &attemptError{transient: true, err: contract.Unavailable("%s endpoint %s timed out after %s", c.what, c.shownURL, c.timeout)}
	case actx.Err() != nil:
		return &attemptError{err: contract.Unavailable("%s endpoint %s: request cancelled", c.what, c.shownURL)}
	}
	return &attemptError{transient: true, err: contract.Unavailable("%s endpoint %s is unreachable: %s", c.what, c.shownURL, c.scrub(err.Error()))}
}

func (c *openAIClient) statusError(resp *http.Response, raw []byte) *attemptError {
	code := resp.StatusCode
	status := fmt.Sprintf("HTTP %d", code)
	switch {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		// never echo the server's message here: some quote the key back
		hint := "set the key in the environment variable named by api_key_env"
		if c.keyEnv != "" {
			hint = "check the key in environment variable " + c.keyEnv
		}
		return &attemptError{err: contract.Unauthorized("%s endpoint %s refused the request (%s); %s", c.what, c.shownURL, status, hint)}
	case code == http.StatusTooManyRequests || code >= 500:
		return &attemptError{
			transient:  true,
			retryAfter: parseRetryAfter(resp.Header.Get("Retry-After")),
			err:        contract.Unavailable("%s endpoint %s answered %s%s", c.what, c.shownURL, status, c.serverMessage(raw)),
		}
	case code == http.StatusNotFound:
		return &attemptError{err: contract.ConfigErr("%s endpoint %s answered %s%s; check the endpoint URL and model", c.what, c.shownURL, status, c.serverMessage(raw))}
	}
	return &attemptError{err: contract.ConfigErr("%s endpoint %s answered %s%s", c.what, c.shownURL, status, c.serverMessage(raw))}
}

// serverMessage extracts the OpenAI error message of a reply body, scrubbed
// and shortened, as ": message" (or "" when there is none).
func (c *openAIClient) serverMessage(raw []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	msg := ""
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(body.Error, &obj) == nil && obj.Message != "":
			msg = obj.Message
		case json.Unmarshal(body.Error, &s) == nil:
			msg = s
		}
	}
	msg = strings.Join(strings.Fields(c.scrub(msg)), " ")
	if msg == "" {
		return ""
	}
	if r := []rune(msg); len(r) > maxServerMessageLength {
		msg = string(r[:maxServerMessageLength]) + "…"
	}
	return ": " + msg
}

// scrub removes the key (and any long prefix of it, which servers like to
// quote half-masked) from a message.
func (c *openAIClient) scrub(s string) string {
	if c.key == "" {
		return s
	}
	s = strings.ReplaceAll(s, c.key, "[redacted]")
	if len(c.key) >= 12 {
		s = strings.ReplaceAll(s, c.key[:8], "[redacted]")
		s = strings.ReplaceAll(s, c.key[len(c.key)-6:], "[redacted]")
	}
	return s
}

func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}
