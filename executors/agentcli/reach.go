package agentcli

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// unreachableWords say that a CLI could not reach its model endpoint at
// all, in the words of the CLIs and the HTTP stacks under them: Codex
// ("Reconnecting... waiting for network (Connection failed: error sending
// request)"), Claude Code ("Connection refused … (ECONNREFUSED)"), Pi and
// the OpenAI SDK ("Connection error."), Node's fetch and DNS. A stream
// cut or reset midway is not one: the endpoint answered.
var unreachableWords = []string{"econnrefused", "connection refused", "waiting for network", "connection failed",
	"connection error", "error sending request", "enotfound", "eai_again", "getaddrinfo", "could not resolve",
	"name resolution", "no route to host", "ehostunreach", "network is unreachable", "enetunreach",
	"failed to connect", "unable to connect", "fetch failed"}

// IsUnreachable reports whether a CLI's error message says it cannot
// reach its model endpoint.
func IsUnreachable(msg string) bool {
	lower := strings.ToLower(msg)
	for _, w := range unreachableWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// resetHints are the reset hints as providers and CLIs word them: "retry
// after 5s", "Retry-After: 5", "resets in 2m", "try again in 4 days 2 hours
// 3 minutes", "try again in 20 seconds", and Claude's "usage limit
// reached|1717430400" (the reset as a Unix time). They are compiled on the
// first rate limit, not in every process's start-up.
var resetHints = sync.OnceValue(func() (h struct{ in, bare, part, epoch *regexp.Regexp }) {
	h.in = regexp.MustCompile(`(?i)(?:retry[- ]after:?|resets? in|try again in|retry in|wait)\s+((?:\d+(?:\.\d+)?\s*(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\b[\s,and]*)+)`)
	h.bare = regexp.MustCompile(`(?i)retry[- ]after:?\s+(\d+)\b`)
	h.part = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)\b`)
	h.epoch = regexp.MustCompile(`\|(\d{10})\b`)
	return h
})

// ResetHint is how long a rate-limit message says to wait before the
// quota resets, or 0 when it does not say. now anchors a reset given as a
// point in time.
func ResetHint(msg string, now time.Time) time.Duration {
	hints := resetHints()
	if m := hints.epoch.FindStringSubmatch(msg); m != nil {
		sec, _ := strconv.ParseInt(m[1], 10, 64)
		if d := time.Unix(sec, 0).Sub(now); d > 0 {
			return d
		}
	}
	if m := hints.in.FindStringSubmatch(msg); m != nil {
		var total time.Duration
		for _, p := range hints.part.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.ParseFloat(p[1], 64)
			total += time.Duration(n * float64(unit(p[2])))
		}
		if total > 0 {
			return total
		}
	}
	if m := hints.bare.FindStringSubmatch(msg); m != nil {
		// Retry-After's own form: a number of seconds.
		n, _ := strconv.Atoi(m[1])
		return time.Duration(n) * time.Second
	}
	return 0
}

func unit(u string) time.Duration {
	switch u = strings.ToLower(u); {
	case u == "ms" || strings.HasPrefix(u, "milli"):
		return time.Millisecond
	case u == "m" || strings.HasPrefix(u, "min"):
		return time.Minute
	case strings.HasPrefix(u, "h"):
		return time.Hour
	case strings.HasPrefix(u, "d"):
		return 24 * time.Hour
	}
	return time.Second
}
