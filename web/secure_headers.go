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
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Response().Header()
			h.Set("Content-Security-Policy", csp)
			h.Set("X-Frame-Options", "DENY")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Cross-Origin-Opener-Policy", "same-origin")
			h.Set("Cross-Origin-Resource-Policy", "same-origin")
			h.Set("Cache-Control", "no-store")
			return next(c)
		}
	}
}
