package web

import "github.com/labstack/echo/v4"

// SecureHeadersConfig sets the headers every response carries: no framing,
// no referrer (the dashboard URL holds the token), no assets from
// elsewhere, no caching of API answers.
type SecureHeadersConfig struct {
	// ContentSecurityPolicy is the CSP; empty means DefaultCSP.
	ContentSecurityPolicy string
}

// DefaultCSP allows only the server's own scripts, styles and requests.
const DefaultCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// SecureHeaders returns the middleware.
func SecureHeaders(cfg SecureHeadersConfig) echo.MiddlewareFunc {
	csp := cfg.ContentSecurityPolicy
	if csp == "" {
		csp = DefaultCSP
	}
	headers := securityHeaders(csp)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			for _, kv := range headers {
				h.Set(kv[0], kv[1])
			}
			return next(c)
		}
	}
}

// securityHeaders are the headers every response carries, Go's own error
// answers included (see headerListener).
func securityHeaders(csp string) [][2]string {
	return [][2]string{
		{"Content-Security-Policy", csp},
		{"X-Frame-Options", "DENY"},
		{"Referrer-Policy", "no-referrer"},
		{"X-Content-Type-Options", "nosniff"},
		{"Cross-Origin-Opener-Policy", "same-origin"},
		{"Cross-Origin-Resource-Policy", "same-origin"},
		{"Cache-Control", "no-store"},
	}
}
