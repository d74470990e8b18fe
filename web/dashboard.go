package web

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"
)

// The dashboard is a page and a few ES modules and a stylesheet, embedded
// as they are: no build step, nothing loaded from elsewhere, so it works
// under the server's Content-Security-Policy (script-src 'self',
// style-src 'self', no inline code). The files hold no data and load
// without the token; the page reads the token from the URL fragment and
// sends it in a header with every API request. Agent and script text is
// set with textContent, never parsed as HTML.
//
//go:embed dashboard
var dashboardFiles embed.FS

// assetTypes are the only kinds of file the dashboard serves.
var assetTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
}

func (s *Server) dashboard(c echo.Context) error {
	page, err := dashboardFiles.ReadFile("dashboard/index.html")
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "text/html; charset=utf-8", page)
}

// dashboardAsset is GET /assets/<name>.
func (s *Server) dashboardAsset(c echo.Context) error {
	name := c.Param("*")
	typ, ok := assetTypes[path.Ext(name)]
	if !ok || strings.Contains(name, "..") || !fs.ValidPath(name) {
		return newAPIError(http.StatusNotFound, codeNotFound, "no dashboard file %q", name)
	}
	b, err := dashboardFiles.ReadFile("dashboard/assets/" + name)
	if err != nil {
		return newAPIError(http.StatusNotFound, codeNotFound, "no dashboard file %q", name)
	}
	return c.Blob(http.StatusOK, typ, b)
}
