package web

import (
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"
)

// SameOriginConfig configures SameOrigin.
type SameOriginConfig struct {
	// Skipper, if set, exempts requests.
	Skipper func(echo.Context) bool
}

// SameOrigin refuses a request that changes state (any method but GET,
// HEAD and OPTIONS) when it carries an Origin other than a loopback origin
// of this server's port. Browsers send Origin on such requests, so a page
// elsewhere cannot drive the runtime even if it learnt the token; shells
// and programs send none and are let through to the token check.
func SameOrigin(cfg SameOriginConfig) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if cfg.Skipper != nil && cfg.Skipper(c) {
				return next(c)
			}
			req := c.Request()
			switch req.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				return next(c)
			}
			origin := req.Header.Get("Origin")
			if origin == "" || sameLoopbackOrigin(origin, req.Host) {
				return next(c)
			}
			return newAPIError(http.StatusForbidden, codeForbidden, "requests from origin %q may not change the runtime's state", origin)
		}
	}
}

// sameLoopbackOrigin reports whether origin is http://<loopback>:<our port>.
func sameLoopbackOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme != "http" || u.Path != "" && u.Path != "/" {
		return false
	}
	return IsLoopbackHost(u.Hostname()) && u.Port() == portOf(host)
}

func portOf(hostport string) string {
	u := url.URL{Host: hostport}
	return u.Port()
}
