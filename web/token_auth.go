package web

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// TokenAuthConfig configures TokenAuth.
type TokenAuthConfig struct {
	// Token is the secret every request must present.
	Token string
	// Skipper, if set, exempts requests (the static dashboard shell).
	Skipper func(echo.Context) bool
}

// TokenAuth requires the token as "Authorization: Bearer <token>", as an
// X-Workflow-Token header, or as a token query parameter (for a client
// that can set no header, such as a browser's EventSource; the dashboard
// sends the header, so its token stays out of request lines and logs). It
// compares in constant time.
func TokenAuth(cfg TokenAuthConfig) echo.MiddlewareFunc {
	want := []byte(cfg.Token)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if cfg.Skipper != nil && cfg.Skipper(c) {
				return next(c)
			}
			got, ok := presentedToken(c.Request())
			if !ok {
				return newAPIError(http.StatusUnauthorized, codeUnauthorized,
					"a token is required: send Authorization: Bearer <token> (it is in the project's runtime.json)")
			}
			if len(want) == 0 || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
				return newAPIError(http.StatusUnauthorized, codeUnauthorized, "the token is wrong")
			}
			return next(c)
		}
	}
}

// presentedToken finds the token in the first place a client may put it.
func presentedToken(r *http.Request) (string, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(tok), true
		}
	}
	if tok := r.Header.Get("X-Workflow-Token"); tok != "" {
		return tok, true
	}
	if q := r.URL.Query(); q.Has("token") {
		return q.Get("token"), true
	}
	return "", false
}
