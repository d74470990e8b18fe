package web

import (
	_ "embed"
	"net/http"

	"github.com/labstack/echo/v4"
)

// The dashboard shell is static and holds no data, so it loads without the
// token; its script reads the token from the URL and sends it with every
// API request. Agent text is set with textContent, never as HTML.
var (
	//go:embed dashboard.html
	dashboardHTML []byte
	//go:embed dashboard.js
	dashboardJS []byte
)

func (s *Server) dashboard(c echo.Context) error {
	return c.Blob(http.StatusOK, "text/html; charset=utf-8", dashboardHTML)
}

func (s *Server) dashboardScript(c echo.Context) error {
	return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", dashboardJS)
}
