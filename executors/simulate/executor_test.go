package simulate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dynworkflow/dynworkflow/executors"
)

func request(prompt string) executors.Request {
	return executors.Request{Prompt: prompt, Attempt: 1}
}

func tagOf(prompt, model string) string {
	sum := sha256.Sum256([]byte(prompt + "|" + model))
	return hex.EncodeToString(sum[:4])
}

func TestTextAnswer(t *testing.T) {
	long := strings.Repeat("abcdefghij", 7) // 70 characters
	for _, tc := range []struct {
		prompt, model string
		want          string
	}{
		{"Say hi", "", `simulated answer to "Say hi" [` + tagOf("Say hi", "") + `]`},
		{"Say hi", "gpt-5", `simulated answer to "Say hi" [` + tagOf("Say hi", "gpt-5") + `]`},
		{"line one\nline\ttwo\r", "", `simulated answer to "line one line two " [` + tagOf("line one\nline\ttwo\r", "") + `]`},
		{long, "", `simulated answer to "` + long[:60] + `…" [` + tagOf(long, "") + `]`},
		{strings.Repeat("é", 61), "", `simulated answer to "` + strings.Repeat("é", 60) + `…" [` + tagOf(strings.Repeat("é", 61), "") + `]`},
	} {
		req := request(tc.prompt)
		req.Model = tc.model
		res, err := New(Config{}).Run(context.Background(), req, nil)
		if err != nil {
			t.Fatalf("Run(%q): %v", tc.prompt, err)
		}
		if res.Text != tc.want {
			t.Errorf("Run(%q).Text =\n%s\nwant\n%s", tc.prompt, res.Text, tc.want)
		}
		if res.Structured != nil {
			t.Errorf("Run(%q).Structured = %s, want nil", tc.prompt, res.Structured)
		}
	}
}

func TestAnswersAreDeterministic(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"title":{"type":"string"},"score":{"type":"integer"}}}`)
	run := func(e *Executor, prompt, model string, schema []byte, attempt int) string {
		t.Helper()
		res, err := e.Run(context.Background(), executors.Request{Prompt: prompt, Model: model, Schema: schema, Attempt: attempt}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Text
	}
	a, b := New(Config{Seed: 1}), New(Config{Seed: 2})
	for _, s := range [][]byte{nil, schema} {
		first := run(a, "review main.go", "m", s, 1)
		for _, again := range []string{
			run(a, "review main.go", "m", s, 1),
			run(a, "review main.go", "m", s, 3),
			run(b, "review main.go", "m", s, 1),
		} {
			if again != first {
				t.Errorf("same request answered %s, then %s", first, again)
			}
		}
		if other := run(a, "review util.go", "m", s, 1); other == first {
			t.Errorf("different prompts both answered %s", first)
		}
		if other := run(a, "review main.go", "n", s, 1); other == first {
			t.Errorf("different models both answered %s", first)
		}
	}
}

func TestResultMetadata(t *testing.T) {
	prompt := strings.Repeat("p", 301)
	var observed []executors.Progress
	res, err := New(Config{}).Run(context.Background(), request(prompt), func(p executors.Progress) {
		observed = append(observed, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Provider != "simulate" || res.Model != "simulated" {
		t.Errorf("provider, model = %q, %q; want simulate, simulated", res.Provider, res.Model)
	}
	wantUsage := executors.Usage{InputTokens: 76, OutputTokens: int64(len(res.Text)+3) / 4}
	if res.Usage != wantUsage {
		t.Errorf("usage = %+v, want %+v", res.Usage, wantUsage)
	}
	if len(res.History) != 2 {
		t.Fatalf("history has %d items, want 2", len(res.History))
	}
	user, assistant := res.History[0], res.History[1]
	if user.Kind != "message" || user.Role != "user" || user.Text != strings.Repeat("p", 200)+"…" {
		t.Errorf("user item = %+v, want the prompt cut to 200 characters", user)
	}
	if assistant.Kind != "message" || assistant.Role != "assistant" || assistant.Text != res.Text {
		t.Errorf("assistant item = %+v, want the answer", assistant)
	}
	if len(observed) != 1 || observed[0].History == nil || *observed[0].History != assistant {
		t.Errorf("observer saw %+v, want the assistant item once", observed)
	}

	req := request("")
	req.Model = "sonnet"
	res, err = New(Config{}).Run(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Model != "sonnet" || res.Usage.InputTokens != 1 {
		t.Errorf("model, input tokens = %q, %d; want sonnet, 1", res.Model, res.Usage.InputTokens)
	}
}

func TestMarkers(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	type outcome struct {
		class   executors.Class // meaningful when fails
		fails   bool
		invalid bool
	}
	ok := outcome{}
	for _, tc := range []struct {
		prompt string
		schema []byte
		want   [3]outcome // attempts 1, 2 and 3
	}{
		{"plain", schema, [3]outcome{ok, ok, ok}},
		{"x [simulate:fail] y", schema, [3]outcome{{class: executors.Terminal, fails: true}, {class: executors.Terminal, fails: true}, {class: executors.Terminal, fails: true}}},
		{"[simulate:transient]", schema, [3]outcome{{class: executors.Transient, fails: true}, ok, ok}},
		{"[simulate:ratelimit]", nil, [3]outcome{{class: executors.RateLimited, fails: true}, {class: executors.RateLimited, fails: true}, {class: executors.RateLimited, fails: true}}},
		{"[simulate:invalid]", schema, [3]outcome{{invalid: true}, {invalid: true}, {invalid: true}}},
		{"[simulate:invalid-once]", schema, [3]outcome{{invalid: true}, ok, ok}},
		{"[simulate:invalid]", nil, [3]outcome{ok, ok, ok}}, // text cannot be invalid
		{"[simulate:transient][simulate:invalid-once]", schema, [3]outcome{{class: executors.Transient, fails: true}, ok, ok}},
		{"[simulate:sleep=1ms] [simulate:invalid-once]", schema, [3]outcome{{invalid: true}, ok, ok}},
		{"[simulate:bogus]", nil, [3]outcome{{class: executors.Terminal, fails: true}, {class: executors.Terminal, fails: true}, {class: executors.Terminal, fails: true}}},
		{"[simulate:sleep=soon]", nil, [3]outcome{{class: executors.Terminal, fails: true}, {class: executors.Terminal, fails: true}, {class: executors.Terminal, fails: true}}},
		{"[simulate:fail", nil, [3]outcome{{class: executors.Terminal, fails: true}, {class: executors.Terminal, fails: true}, {class: executors.Terminal, fails: true}}},
	} {
		var valid *validator
		if tc.schema != nil {
			valid = compileValidator(t, string(tc.schema))
		}
		e := New(Config{})
		for i, want := range tc.want {
			attempt := i + 1
			res, err := e.Run(context.Background(), executors.Request{Prompt: tc.prompt, Schema: tc.schema, Attempt: attempt}, nil)
			if want.fails {
				var xerr *executors.Error
				if !errors.As(err, &xerr) || xerr.Class != want.class {
					t.Errorf("%q attempt %d: error %v, want a %v *executors.Error", tc.prompt, attempt, err, want.class)
				}
				continue
			}
			if err != nil {
				t.Errorf("%q attempt %d: %v", tc.prompt, attempt, err)
				continue
			}
			if valid != nil {
				if err := valid.check(res.Text); (err != nil) != want.invalid {
					t.Errorf("%q attempt %d: answer %s, validation error %v; want invalid %v", tc.prompt, attempt, res.Text, err, want.invalid)
				}
			}
		}
	}
}

func TestRateLimitError(t *testing.T) {
	_, err := New(Config{}).Run(context.Background(), request("[simulate:ratelimit]"), nil)
	var xerr *executors.Error
	if !errors.As(err, &xerr) || xerr.RetryAfter != time.Minute || !strings.Contains(xerr.Message, "resets in 1m") {
		t.Errorf("rate limit error = %#v, want RetryAfter 1m and a message saying when it resets", err)
	}
}

func TestFailureRate(t *testing.T) {
	const attempts = 10_000
	e := New(Config{FailureRate: 0.1, MinLatency: time.Millisecond, MaxLatency: time.Millisecond, Seed: 42})
	// The latency is configured only for RetryAfter; the calls use the sleep
	// marker so that the test does not wait.
	failures := 0
	for i := range attempts {
		_, err := e.Run(context.Background(), executors.Request{Prompt: "[simulate:sleep=0s] go", Attempt: i%3 + 1}, nil)
		if err == nil {
			continue
		}
		failures++
		var xerr *executors.Error
		if !errors.As(err, &xerr) || xerr.Class != executors.Transient {
			t.Fatalf("random failure %v is not a transient *executors.Error", err)
		}
		if xerr.Message != "simulated transient failure (--simulate-failure-rate 0.1)" || xerr.RetryAfter != time.Millisecond {
			t.Fatalf("random failure = %q retry after %v", xerr.Message, xerr.RetryAfter)
		}
	}
	if rate := float64(failures) / attempts; rate < 0.08 || rate > 0.12 {
		t.Errorf("%d of %d attempts failed (%.3f), want about 0.1", failures, attempts, rate)
	}

	// A fixed seed repeats the same failures.
	pattern := func() (p []bool) {
		e := New(Config{FailureRate: 0.5, Seed: 9})
		for range 64 {
			_, err := e.Run(context.Background(), request("go"), nil)
			p = append(p, err != nil)
		}
		return p
	}
	if a, b := pattern(), pattern(); !equalBools(a, b) {
		t.Errorf("same seed failed differently:\n%v\n%v", a, b)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestConcurrentCalls is for the race detector: calls share the PRNG and the
// schema cache.
func TestConcurrentCalls(t *testing.T) {
	e := New(Config{MaxLatency: time.Millisecond, FailureRate: 0.2})
	schema := []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			req := request("concurrent")
			if i%2 == 0 {
				req.Schema = schema
			}
			for range 20 {
				if _, err := e.Run(context.Background(), req, nil); err != nil && executors.ClassOf(err) != executors.Transient {
					t.Errorf("call failed: %v", err)
				}
			}
		})
	}
	wg.Wait()
}

func TestBadSchemaFailsTerminally(t *testing.T) {
	req := request("hello")
	req.Schema = []byte(`{"$ref":"https://example.com/schema.json"}`)
	_, err := New(Config{}).Run(context.Background(), req, nil)
	if executors.ClassOf(err) != executors.Terminal || !strings.Contains(err.Error(), "not local") {
		t.Errorf("Run with a remote $ref = %v, want a terminal error saying it is not local", err)
	}
}

func TestImplementsExecutor(t *testing.T) {
	var e executors.Executor = New(Config{})
	if e.Name() != "simulate" {
		t.Errorf("Name() = %q, want simulate", e.Name())
	}
}

func TestSizeMarker(t *testing.T) {
	e := New(Config{})
	for _, size := range []int{1, 10, 102400} {
		prompt := fmt.Sprintf("big [simulate:size=%d] ünïcode", size)
		res, err := e.Run(context.Background(), executors.Request{Prompt: prompt, Attempt: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Text) != size || !utf8.ValidString(res.Text) {
			t.Errorf("size=%d: an answer of %d bytes (valid UTF-8: %v)", size, len(res.Text), utf8.ValidString(res.Text))
		}
		again, _ := e.Run(context.Background(), executors.Request{Prompt: prompt, Attempt: 2}, nil)
		if again.Text != res.Text {
			t.Errorf("size=%d: the answer changed between attempts", size)
		}
	}
	for _, bad := range []string{"[simulate:size=0]", "[simulate:size=big]", "[simulate:size=99999999999]"} {
		if _, err := e.Run(context.Background(), executors.Request{Prompt: bad, Attempt: 1}, nil); err == nil {
			t.Errorf("%s did not fail", bad)
		}
	}
}
