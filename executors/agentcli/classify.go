package agentcli

import (
	"strconv"
	"strings"

	"github.com/dynworkflow/dynworkflow/executors"
)

// ClassifyStatus classifies an HTTP status a provider answered with: 429
// is a rate limit (the run pauses), 401 and 403 say the credentials are
// refused (the executor is unavailable: the run pauses until the user logs
// in), 408, 409 and 5xx (529 is Anthropic's "overloaded") are transient,
// any other 4xx is terminal (a bad request does not get better by trying
// again). Zero means unknown.
func ClassifyStatus(status int) (executors.Class, bool) {
	switch {
	case status == 429:
		return executors.RateLimited, true
	case status == 401 || status == 403:
		return executors.Unavailable, true
	case status == 408 || status == 409 || status >= 500:
		return executors.Transient, true
	case status >= 400:
		return executors.Terminal, true
	}
	return executors.Terminal, false
}

// The words below are read only in a CLI's own error reports (its error
// events and standard error), never in tool output or answers: a file
// about a "rate limiter" must not pause a run.
var (
	// loginWords say that the CLI has no usable credentials.
	loginWords = []string{"not logged in", "please run /login", "no api key", "missing environment variable", "invalid api key",
		"invalid x-api-key", "incorrect api key", "authentication_error", "authentication failed", "authentication_failed",
		"failed to authenticate", "unauthorized", "api key not valid", "token has expired", "login required", "log in again"}
	// modelWords, next to the word "model", say that the model does not
	// exist or is not open to this account.
	modelWords     = []string{"not found", "does not exist", "may not exist", "unknown model", "model_not_found", "invalid model", "unsupported model", "not supported"}
	rateLimitWords = []string{"rate limit", "rate_limit", "ratelimit", "too many requests", "usage limit", "quota", "429"}
	transientWords = []string{"high demand", "overloaded", "stream disconnected", "stream closed", "stream ended", "terminated",
		"timeout", "timed out", "connection", "connect to", "refused", "reset by peer", "econnreset", "econnrefused", "socket hang up", "network", "fetch failed",
		"temporar", "unavailable", "internal server error", "500", "502", "503", "504", "529"}
)

// ClassifyMessage classifies a CLI's error message: a leading or quoted
// HTTP status decides; otherwise words that name missing credentials or an
// unknown model (unavailable), a rate limit, or a passing network or
// server trouble; anything else is terminal.
func ClassifyMessage(msg string) executors.Class {
	status := StatusIn(msg)
	if status == 404 && isUnknownModel(msg) {
		return executors.Unavailable
	}
	if c, ok := ClassifyStatus(status); ok {
		return c
	}
	if _, ok := UnavailableCause(msg); ok {
		return executors.Unavailable
	}
	lower := strings.ToLower(msg)
	for _, w := range rateLimitWords {
		if strings.Contains(lower, w) {
			return executors.RateLimited
		}
	}
	for _, w := range transientWords {
		if strings.Contains(lower, w) {
			return executors.Transient
		}
	}
	return executors.Terminal
}

// Why an executor is unavailable.
const (
	CauseLogin = "login"
	CauseModel = "model"
)

// UnavailableCause reports whether msg says that the executor cannot
// serve any call, and why: CauseLogin or CauseModel.
func UnavailableCause(msg string) (string, bool) {
	if isUnknownModel(msg) {
		return CauseModel, true
	}
	lower := strings.ToLower(msg)
	for _, w := range loginWords {
		if strings.Contains(lower, w) {
			return CauseLogin, true
		}
	}
	if s := StatusIn(msg); s == 401 || s == 403 {
		return CauseLogin, true
	}
	return "", false
}

func isUnknownModel(msg string) bool {
	lower := strings.ToLower(msg)
	if !strings.Contains(lower, "model") {
		return false
	}
	for _, w := range modelWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// StatusIn finds an HTTP status in a message such as "401 fake invalid
// api key" or "unexpected status 401 Unauthorized", or returns 0.
func StatusIn(msg string) int {
	fields := strings.FieldsFunc(msg, func(r rune) bool { return r < '0' || r > '9' })
	for _, f := range fields {
		if len(f) != 3 {
			continue
		}
		n, _ := strconv.Atoi(f)
		if n >= 400 && n <= 599 {
			// Only a status that stands as a word: "status 429", "(429)",
			// "429 Too Many Requests", not "port 45129".
			i := strings.Index(msg, f)
			before := i == 0 || !isAlnum(msg[i-1])
			after := i+3 == len(msg) || !isAlnum(msg[i+3])
			if before && after {
				return n
			}
		}
	}
	return 0
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '.' || c == ':'
}
