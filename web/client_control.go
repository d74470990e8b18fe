package web

import (
	"context"
	"net/http"
	"net/url"
)

// StopCall calls POST /api/runs/{id}/calls/stop.
func (c *Client) StopCall(ctx context.Context, id, path string) error {
	return c.do(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(id)+"/calls/stop", CallRequest{Path: path}, nil)
}

// RestartCall calls POST /api/runs/{id}/calls/restart.
func (c *Client) RestartCall(ctx context.Context, id, path string) error {
	return c.do(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(id)+"/calls/restart", CallRequest{Path: path}, nil)
}

// Fork calls POST /api/runs/{id}/fork.
func (c *Client) Fork(ctx context.Context, id string, req ForkRequest) (StartResponse, error) {
	var r StartResponse
	return r, c.do(ctx, http.MethodPost, "/api/runs/"+url.PathEscape(id)+"/fork", req, &r)
}
