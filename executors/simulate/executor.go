package simulate

import (
	"cmp"
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/executors"
)

// Name is the simulated executor's name, as scripts and the CLI select it.
const Name = "simulate"

// Config tunes the simulated executor. The zero Config answers instantly and
// never fails.
type Config struct {
	// MinLatency and MaxLatency bound how long each call takes; the latency
	// is uniform in [MinLatency, MaxLatency].
	MinLatency, MaxLatency time.Duration
	// FailureRate is the probability, from 0 to 1, that an attempt fails
	// with a transient error.
	FailureRate float64
	// Seed seeds the PRNG that draws latencies and failures. Zero picks a
	// random seed.
	Seed uint64
	// Defaults are the configured defaults of calls (a model, a policy):
	// the simulated executor answers the same whatever they are, and
	// reports them so that the journal records them as for any executor.
	Defaults executors.Defaults
}

// Executor is the simulated executor. It is safe for concurrent use.
type Executor struct {
	cfg Config
	// seeded is whether the seed was given, not drawn.
	seeded bool
	// failMessage is built once so that failing attempts do not format it.
	failMessage string

	// mu guards rng: concurrent calls share one sequence of draws.
	mu  sync.Mutex
	rng *rand.Rand

	schemas schemaCache
	// buffers holds *[]byte for generating answers to schemas.
	buffers sync.Pool
}

var _ executors.Executor = (*Executor)(nil)

// New returns a simulated executor. Out-of-range settings are clamped rather
// than rejected: negative latencies become zero, a MaxLatency below
// MinLatency becomes MinLatency, and FailureRate is held within [0, 1].
func New(cfg Config) *Executor {
	cfg.MinLatency = max(cfg.MinLatency, 0)
	cfg.MaxLatency = max(cfg.MaxLatency, cfg.MinLatency)
	cfg.FailureRate = min(max(cfg.FailureRate, 0), 1)
	seeded := cfg.Seed != 0
	if cfg.Seed == 0 {
		cfg.Seed = rand.Uint64()
	}
	return &Executor{
		cfg: cfg, seeded: seeded,
		failMessage: "simulated transient failure (--simulate-failure-rate " +
			strconv.FormatFloat(cfg.FailureRate, 'g', -1, 64) + ")",
		rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
	}
}

// The keys of the settings Describe reports, as the flags that set them
// take them (--simulate-latency, --simulate-failure-rate, --simulate-seed).
const (
	SettingLatency     = "latency"
	SettingFailureRate = "failureRate"
	SettingSeed        = "seed"
)

// Describe says how the executor is configured; its settings are those
// that differ from the default, in the flags' own form.
func (e *Executor) Describe() executors.Definition {
	d := executors.Definition{Name: Name, Kind: Name}
	set := func(k, v string) {
		if d.Settings == nil {
			d.Settings = map[string]string{}
		}
		d.Settings[k] = v
	}
	switch c := e.cfg; {
	case c.MaxLatency > c.MinLatency:
		set(SettingLatency, c.MinLatency.String()+".."+c.MaxLatency.String())
	case c.MinLatency > 0:
		set(SettingLatency, c.MinLatency.String())
	}
	if e.cfg.FailureRate > 0 {
		set(SettingFailureRate, strconv.FormatFloat(e.cfg.FailureRate, 'g', -1, 64))
	}
	if e.seeded {
		set(SettingSeed, strconv.FormatUint(e.cfg.Seed, 10))
	}
	return d
}

// Name returns "simulate".
func (e *Executor) Name() string { return Name }

// Defaults are the configured defaults of calls.
func (e *Executor) Defaults() executors.Defaults { return e.cfg.Defaults }

// Run answers one call: it waits out the call's latency, fails if a marker or
// the failure rate says so, and otherwise returns the deterministic answer.
// It returns ctx.Err() as soon as ctx is done.
func (e *Executor) Run(ctx context.Context, req executors.Request, observe executors.Observer) (executors.Result, error) {
	if err := ctx.Err(); err != nil {
		return executors.Result{}, err
	}
	m, err := scanMarkers(req.Prompt)
	if err != nil {
		return executors.Result{}, &executors.Error{Class: executors.Terminal, Message: err.Error()}
	}
	latency, failed := e.draw(m)
	if latency > 0 && observe != nil {
		// As a CLI says what its agent is up to, for the liveness views.
		a := executors.NewActivity(executors.ActivityTool, "simulate: working for "+latency.String())
		observe(executors.Progress{Activity: &a})
	}
	if err := sleep(ctx, latency); err != nil {
		return executors.Result{}, err
	}
	attempt := max(req.Attempt, 1)
	if err := e.failure(m, attempt, failed); err != nil {
		return executors.Result{}, err
	}
	return e.answer(req, m.invalidOn(attempt), m.size, observe)
}

// draw decides this call's latency and whether it fails at random. It takes
// the lock only when there is something to draw, so a zero Config never
// contends.
func (e *Executor) draw(m markers) (latency time.Duration, failed bool) {
	latency = e.cfg.MinLatency
	if m.hasSleep {
		latency = m.sleep
	}
	spread := e.cfg.MaxLatency - e.cfg.MinLatency
	drawLatency := !m.hasSleep && spread > 0
	drawFailure := e.cfg.FailureRate > 0
	if !drawLatency && !drawFailure {
		return latency, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if drawLatency {
		latency += time.Duration(e.rng.Int64N(int64(spread) + 1))
	}
	if drawFailure {
		failed = e.rng.Float64() < e.cfg.FailureRate
	}
	return latency, failed
}

// failure returns the error this attempt must fail with, if any. Markers come
// before the random failure so that tests relying on them are exact.
func (e *Executor) failure(m markers, attempt int, failed bool) error {
	switch {
	case m.fail:
		return &executors.Error{Class: executors.Terminal, Message: "simulated terminal failure ([simulate:fail] in the prompt)"}
	case m.rateLimit:
		reset := cmp.Or(m.reset, time.Minute)
		return &executors.Error{Class: executors.RateLimited, Message: "simulated rate limit; resets in " + reset.String(), RetryAfter: reset}
	case m.transient && attempt == 1:
		return &executors.Error{Class: executors.Transient, Message: "simulated transient failure ([simulate:transient] in the prompt, attempt 1)"}
	case failed:
		return &executors.Error{Class: executors.Transient, Message: e.failMessage, RetryAfter: e.cfg.MinLatency}
	}
	return nil
}
