package callpolicy

import (
	"fmt"
	"strings"
	"time"
)

// Quotas. A rate limit or usage limit (executors.RateLimited) is not the
// call's failure and not worth a retry: every other call of the same
// account would meet it too, and retrying into it is how a thousand-agent
// run burns its tokens for nothing. So the call tells the backend (Quota),
// which holds every call of the executor's account, in every run it
// coordinates, until the reset; and the run parks, paused with ResumeAt,
// its finished calls journaled. It resumes at the reset by itself where
// something is there to do it (serve, resume --wait), and runs the call
// again then; nothing is paid twice, since the call had no answer.
//
// A call that finds its account's quota spent does not start at all, and
// parks its run the same way.

// Quota is how a backend shares what calls learn of their executors'
// quotas. A Launcher that implements it gets the rule above; one that
// does not pauses the run on a rate limit, for a resume by hand.
type Quota interface {
	// QuotaBlocked reports whether calls of executor must not start now,
	// until when, and what the provider said.
	QuotaBlocked(executor string) (until time.Time, why string, blocked bool)
	// QuotaSpent records that a call of executor met its limit (hint is
	// the provider's wait, 0 when it gave none) and returns the reset
	// every call of the executor's account waits for.
	QuotaSpent(executor string, hint time.Duration, why string) (until time.Time)
}

// QuotaReason is the pause reason of a run parked until its executor's
// quota resets at until: "waiting for quota until 15:04:05: …".
func QuotaReason(executor string, until time.Time, why string) string {
	return fmt.Sprintf("waiting for quota until %s: executor %s is rate limited (%s); "+
		"it resumes by itself at the reset under dynworkflow serve, or with dynworkflow resume --wait",
		until.Local().Format(time.TimeOnly), executor, strings.TrimSuffix(why, "."))
}

// parked is the outcome of a call that parks its run until a reset.
func parked(o Outcome, executor string, until time.Time, why string) Outcome {
	o.Kind, o.ResumeAt = Paused, until
	o.PauseReason = QuotaReason(executor, until, why)
	o.Err = RateLimitError(o.PauseReason)
	return o
}
