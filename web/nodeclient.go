package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// nodeHealthTimeout bounds the health check of a Node runtime whose
// process is alive.
const nodeHealthTimeout = 5 * time.Second

// NodeClient talks to a live serve of the Node runtime (npm
// @fish59fish/dynamic-workflows) through the API its own client uses. The
// CLI forwards to it what only that process can do: control the runs it
// executes and answer their checkpoints.
type NodeClient struct {
	*Client
	Descriptor Descriptor
}

// ErrNotNode is matched when a descriptor is not the Node runtime's.
var ErrNotNode = errors.New("runtime.json was not written by the Node runtime")

// ConnectNode reads the descriptor at path and, when the Node runtime
// wrote it for project directory cwd, checks that its server may be
// trusted before anything is sent to it: the file is ours (ReadDescriptor),
// its pid is a live process of ours, its host is a loopback address, the
// socket that answers belongs to our user (the trusted dialer), and its
// /api/health, asked with the token, names the same pid, protocol and
// project. The Node runtime takes no lock we could probe, so the pid and
// the peer's owner stand in for the lock Connect checks.
func ConnectNode(ctx context.Context, path, cwd string) (*NodeClient, error) {
	d, err := ReadDescriptor(path)
	if err != nil {
		return nil, err
	}
	if !d.WrittenByNode() {
		return nil, ErrNotNode
	}
	switch {
	case d.ProtocolVersion != ProtocolVersion:
		return nil, fmt.Errorf("%s speaks protocol %d; this program speaks %d", path, d.ProtocolVersion, ProtocolVersion)
	case len(d.AuthToken) < 32:
		return nil, fmt.Errorf("%w: %s has a token shorter than the Node runtime writes", ErrUntrustedPeer, path)
	case filepath.Clean(d.Cwd) != filepath.Clean(cwd):
		return nil, fmt.Errorf("%s describes the runtime of %s, not of %s", path, d.Cwd, cwd)
	case d.PID <= 0 || unix.Kill(d.PID, 0) != nil:
		// EPERM too: a process of another user is not ours to trust.
		return nil, fmt.Errorf("%w: the Node runtime's process %d is gone", ErrStaleDescriptor, d.PID)
	case d.Port <= 0 || d.Port > 65535:
		return nil, fmt.Errorf("%w: port %d", ErrUntrustedPeer, d.Port)
	}
	host := d.Host
	if host == "localhost" { // the Node runtime's default names; never resolved
		host = "127.0.0.1"
	}
	d.Address = net.JoinHostPort(host, strconv.Itoa(d.Port))
	if err := checkLoopbackAddr(d.Address); err != nil {
		return nil, err
	}
	d.URL, d.Token = "http://"+d.Address, d.AuthToken
	c := &NodeClient{Client: newTrustedClient(d.URL, d.AuthToken), Descriptor: d}
	// Longer than Connect's wait: its pid is alive already, and a busy
	// machine must not make the CLI take the project from it.
	hctx, cancel := context.WithTimeout(ctx, nodeHealthTimeout)
	defer cancel()
	var h Health
	if _, err := c.call(hctx, http.MethodGet, "/api/health", nil, &h, http.StatusOK); err != nil {
		return nil, fmt.Errorf("the Node runtime in %s does not answer: %w", path, err)
	}
	if !h.OK || h.PID != d.PID || h.ProtocolVersion != ProtocolVersion || filepath.Clean(h.Cwd) != filepath.Clean(cwd) {
		return nil, fmt.Errorf("%w: the server at %s is not the Node runtime %s describes", ErrUntrustedPeer, d.URL, path)
	}
	return c, nil
}

// NodeCheckpoint is a checkpoint pending in the Node runtime.
type NodeCheckpoint struct {
	ID      string `json:"id"`
	RunID   string `json:"runId"`
	Prompt  string `json:"prompt"`
	Options struct {
		Default json.RawMessage `json:"default,omitempty"`
		Kind    string          `json:"kind,omitempty"` // confirm, input or select; confirm when absent
		Choices []string        `json:"choices,omitempty"`
	} `json:"options"`
	CreatedAt string `json:"createdAt"`
}

// Checkpoints lists the checkpoints pending in the Node runtime.
func (c *NodeClient) Checkpoints(ctx context.Context) ([]NodeCheckpoint, error) {
	var o struct {
		Checkpoints []NodeCheckpoint `json:"checkpoints"`
	}
	_, err := c.call(ctx, http.MethodGet, "/api/overview", nil, &o, http.StatusOK)
	return o.Checkpoints, err
}

// Control pauses, resumes, stops or deletes run id, as the Node runtime's
// client does; refused is its {ok: false}.
func (c *NodeClient) Control(ctx context.Context, action, id string) error {
	method, path, accept := http.MethodPost, "/api/runs/"+url.PathEscape(id)+"/"+action, []int{http.StatusAccepted, http.StatusConflict}
	if action == "delete" {
		method, path, accept = http.MethodDelete, "/api/runs/"+url.PathEscape(id), []int{http.StatusOK, http.StatusNotFound}
	}
	var body any
	if method == http.MethodPost {
		body = map[string]any{}
	}
	var r struct {
		OK bool `json:"ok"`
	}
	if _, err := c.call(ctx, method, path, body, &r, accept...); err != nil {
		return err
	}
	if !r.OK {
		return fmt.Errorf("the Node runtime (pid %d) could not %s run %s", c.Descriptor.PID, action, id)
	}
	return nil
}

// Resume resumes run id, with the text of an edited script when script
// is not empty.
func (c *NodeClient) Resume(ctx context.Context, id, script string) error {
	body := map[string]string{}
	if script != "" {
		body["script"] = script
	}
	var r struct {
		OK bool `json:"ok"`
	}
	if _, err := c.call(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(id)+"/resume", body, &r,
		http.StatusAccepted, http.StatusConflict); err != nil {
		return err
	}
	if !r.OK {
		return fmt.Errorf("the Node runtime (pid %d) could not resume run %s", c.Descriptor.PID, id)
	}
	return nil
}

// Respond answers checkpoint id with value.
func (c *NodeClient) Respond(ctx context.Context, id string, value json.RawMessage) error {
	var r struct {
		OK bool `json:"ok"`
	}
	if _, err := c.call(ctx, http.MethodPost, "/api/checkpoints/"+url.PathEscape(id)+"/respond",
		map[string]json.RawMessage{"value": value}, &r, http.StatusOK, http.StatusNotFound); err != nil {
		return err
	}
	if !r.OK {
		return fmt.Errorf("the Node runtime (pid %d) has no pending checkpoint %s", c.Descriptor.PID, id)
	}
	return nil
}

// call sends a request in the Node runtime's dialect and decodes its
// answer into out when the status is one of accept; any other status is
// an error with its message ({"error": "..."}).
func (c *NodeClient) call(ctx context.Context, method, path string, body, out any, accept ...int) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return res.StatusCode, err
	}
	if !slices.Contains(accept, res.StatusCode) {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error != "" {
			return res.StatusCode, &APIError{Status: res.StatusCode, ErrorInfo: ErrorInfo{Code: "http_" + strconv.Itoa(res.StatusCode), Message: e.Error}}
		}
		return res.StatusCode, &APIError{Status: res.StatusCode, ErrorInfo: ErrorInfo{Code: "http_" + strconv.Itoa(res.StatusCode), Message: res.Status}}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return res.StatusCode, fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
		}
	}
	return res.StatusCode, nil
}
