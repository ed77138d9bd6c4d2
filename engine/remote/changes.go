package remote

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"mnemo/contract"
	"mnemo/server/wire"
)

// Changes reads the server's change feed (GET /v1/changes). A call that
// waits (Wait, and a since rather than from_now) reads from a stream of the
// feed that the calls before it opened (stream.go); the others, and every
// call to a server without the stream form, are one request each (a long
// poll when it waits). The call's timeout is the client's plus the wait, so
// a long poll is never cut short by the client; ctx still ends it.
func (c *Client) Changes(ctx context.Context, req contract.ChangesRequest) (contract.ChangesPage, error) {
	if err := req.Validate(); err != nil {
		return contract.ChangesPage{}, err
	}
	if req.Wait > 0 && !req.FromNow && !c.streams.isOff() {
		if page, ok, err := c.changesStreamed(ctx, req); ok {
			return page, err
		}
	}
	path := "/v1/changes?" + ChangesValues(req).Encode()
	return retrying(ctx, c.retries, func() (contract.ChangesPage, time.Duration, error) {
		return c.changesOnce(ctx, path, req.Wait)
	})
}

// ChangesValues is the URL query of a changes request.
func ChangesValues(req contract.ChangesRequest) url.Values {
	v := url.Values{}
	if req.FromNow {
		v.Set("since", "now")
	} else {
		v.Set("since", strconv.FormatUint(req.Since, 10))
	}
	v.Set("limit", strconv.Itoa(req.Limit))
	if req.Wait > 0 {
		v.Set("wait", req.Wait.String())
	}
	if req.Reach != nil {
		b, _ := json.Marshal(req.Reach)
		v.Set("reach", string(b))
	}
	return v
}

func (c *Client) changesOnce(ctx context.Context, path string, wait time.Duration) (contract.ChangesPage, time.Duration, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout+wait)
		defer cancel()
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return contract.ChangesPage{}, 0, contract.ConfigErr("cannot build a request to %s", c.label)
	}
	hr.Header.Set("Accept", "application/json")
	if c.token != "" {
		hr.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return contract.ChangesPage{}, 0, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return contract.ChangesPage{}, 0, c.transportError(ctx, err)
	}
	if resp.StatusCode == http.StatusOK {
		page, err := c.decodePage(nil, data)
		return page, 0, err
	}
	apiErr := wire.ErrorOf(resp.StatusCode, data)
	if resp.StatusCode == http.StatusTooManyRequests {
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return contract.ChangesPage{}, time.Duration(max(secs, 1)) * time.Second, apiErr
	}
	return contract.ChangesPage{}, 0, apiErr
}

// decodePage reads a page of changes (a long poll's answer, a stream's
// event) with dec (a stream's, kept from page to page; nil: a new one).
// The page's strings share data's memory: data is the caller's to give.
func (c *Client) decodePage(dec *contract.ChangesDecoder, data []byte) (contract.ChangesPage, error) {
	// The page's own decoder, not json.Unmarshal: that would first scan the
	// whole page to validate it, then again to hand it over.
	if dec == nil {
		dec = new(contract.ChangesDecoder)
	}
	page, err := dec.Decode(data)
	if err != nil {
		return contract.ChangesPage{}, contract.EngineErr("the server at %s answered changes with JSON this client cannot read: %v", c.label, err)
	}
	page.Changes = contract.EmptyIfNil(page.Changes)
	return page, nil
}
