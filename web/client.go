package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
)

// Client talks to a runtime server. The CLI uses it to forward commands
// to the project's live owner.
type Client struct {
	base  string
	token string
	http  *http.Client
}

// NewClient returns a client for the server at base (http://host:port).
// It trusts base: Connect is how the CLI reaches a runtime it found in a
// descriptor.
func NewClient(base, token string) *Client {
	return &Client{base: base, token: token, http: &http.Client{}}
}

// newTrustedClient returns a client whose every connection is checked by
// trustedDialer before a request goes out on it.
func newTrustedClient(base, token string) *Client {
	tr := &http.Transport{
		Proxy:               nil, // the token never goes to a proxy
		DialContext:         trustedDialer,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     30 * time.Second,
	}
	return &Client{base: base, token: token, http: &http.Client{Transport: tr}}
}

// APIError is an error answer of the server.
type APIError struct {
	Status int
	ErrorInfo
}

func (e *APIError) Error() string {
	if e.Position != "" && !bytes.Contains([]byte(e.Message), []byte(e.Position)) {
		return e.Position + ": " + e.Message
	}
	return e.Message
}

// healthTimeout bounds the check that a descriptor's process is alive: a
// CLI that finds a dead owner falls back to running locally, quickly.
const healthTimeout = 750 * time.Millisecond

// Connect reads the descriptor at path, makes sure that it may be trusted
// (see trust.go) before anything is sent to its address, and then checks
// through /api/health that its process holds the token and has the pid it
// claims. Any failure means there is no live owner.
func Connect(ctx context.Context, path string) (*Client, Descriptor, error) {
	d, err := ReadDescriptor(path)
	if err != nil {
		return nil, d, err
	}
	if d.ProtocolVersion != ProtocolVersion {
		return nil, d, fmt.Errorf("%s speaks protocol %d; this program speaks %d", path, d.ProtocolVersion, ProtocolVersion)
	}
	if err := checkOwnerLive(path); err != nil {
		return nil, d, err
	}
	if err := checkLoopbackAddr(d.Address); err != nil {
		return nil, d, err
	}
	c := newTrustedClient("http://"+d.Address, d.Token)
	hctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	h, err := c.Health(hctx)
	if err != nil {
		return nil, d, fmt.Errorf("the runtime in %s does not answer: %w", path, err)
	}
	if h.PID != d.PID {
		return nil, d, fmt.Errorf("the runtime at %s is pid %d, not pid %d as %s says", d.URL, h.PID, d.PID, path)
	}
	return c, d, nil
}

// Health calls GET /api/health.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	return h, c.do(ctx, http.MethodGet, "/api/health", nil, &h)
}

// Overview calls GET /api/overview.
func (c *Client) Overview(ctx context.Context) (Overview, error) {
	var o Overview
	return o, c.do(ctx, http.MethodGet, "/api/overview", nil, &o)
}

// Start calls POST /api/runs.
func (c *Client) Start(ctx context.Context, req StartRequest) (StartResponse, error) {
	var r StartResponse
	return r, c.do(ctx, http.MethodPost, "/api/runs", req, &r)
}

// Resume calls POST /api/runs/{id}/resume.
func (c *Client) Resume(ctx context.Context, id string, req ResumeRequest) (StartResponse, error) {
	var r StartResponse
	return r, c.do(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(id)+"/resume", req, &r)
}

// Pause calls POST /api/runs/{id}/pause.
func (c *Client) Pause(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(id)+"/pause", nil, nil)
}

// Stop calls POST /api/runs/{id}/stop.
func (c *Client) Stop(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(id)+"/stop", nil, nil)
}

// Delete calls DELETE /api/runs/{id}.
func (c *Client) Delete(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/runs/"+url.PathEscape(id), nil, nil)
}

// Run calls GET /api/runs/{id}.
func (c *Client) Run(ctx context.Context, id string) (*engine.Detail, error) {
	var d engine.Detail
	return &d, c.do(ctx, http.MethodGet, "/api/runs/"+url.PathEscape(id), nil, &d)
}

// Runs calls GET /api/runs.
func (c *Client) Runs(ctx context.Context) ([]store.Summary, error) {
	var r struct {
		Runs []store.Summary `json:"runs"`
	}
	return r.Runs, c.do(ctx, http.MethodGet, "/api/runs", nil, &r)
}

// Checkpoints calls GET /api/checkpoints.
func (c *Client) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	var r struct {
		Checkpoints []Checkpoint `json:"checkpoints"`
	}
	return r.Checkpoints, c.do(ctx, http.MethodGet, "/api/checkpoints", nil, &r)
}

// Respond calls POST /api/checkpoints/{id}/respond.
func (c *Client) Respond(ctx context.Context, id string, value json.RawMessage) error {
	return c.do(ctx, http.MethodPost, "/api/checkpoints/"+url.PathEscape(id)+"/respond", RespondRequest{Value: value}, nil)
}

func (c *Client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", MediaType)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return err
	}
	res, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return readAPIError(res)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, res.Body)
		return err
	}
	if err := json.NewDecoder(res.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

func readAPIError(res *http.Response) error {
	var body ErrorBody
	b, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if json.Unmarshal(b, &body) != nil || body.Error.Code == "" {
		return &APIError{Status: res.StatusCode, ErrorInfo: ErrorInfo{Code: "http_" + fmt.Sprint(res.StatusCode), Message: res.Status}}
	}
	return &APIError{Status: res.StatusCode, ErrorInfo: body.Error}
}

// IsStatus reports whether err is an API error with HTTP status status.
func IsStatus(err error, status int) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == status
}
