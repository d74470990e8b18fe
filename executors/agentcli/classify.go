package agentcli

import (
	"strconv"
	"strings"

	"github.com/dynworkflow/dynworkflow/executors"
)

// ClassifyStatus classifies an HTTP status a provider answered with: 429
// is a rate limit (the run pauses), 408, 409 and 5xx (529 is Anthropic's
// "overloaded") are transient, any other 4xx is terminal (a bad key or a
// bad request does not get better by trying again). Zero means unknown.
func ClassifyStatus(status int) (executors.Class, bool) {
	switch {
	case status == 429:
		return executors.RateLimited, true
	case status == 408 || status == 409 || status >= 500:
		return executors.Transient, true
	case status >= 400:
		return executors.Terminal, true
	}
	return executors.Terminal, false
}

// rateLimitWords and transientWords are read only in a CLI's own error
// reports, never in tool output or answers: a file about a "rate limiter"
// must not pause a run.
var (
	rateLimitWords = []string{"rate limit", "rate_limit", "ratelimit", "too many requests", "usage limit", "quota", "429"}
	transientWords = []string{"high demand", "overloaded", "stream disconnected", "stream closed", "stream ended", "terminated",
		"timeout", "timed out", "connection", "connect to", "refused", "reset by peer", "econnreset", "econnrefused", "socket hang up", "network", "fetch failed",
		"temporar", "unavailable", "internal server error", "500", "502", "503", "504", "529"}
)

// ClassifyMessage classifies a CLI's error message: a leading or quoted
// HTTP status decides; otherwise words that name a rate limit or a
// passing network or server trouble; anything else is terminal.
func ClassifyMessage(msg string) executors.Class {
	if c, ok := ClassifyStatus(StatusIn(msg)); ok {
		return c
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
