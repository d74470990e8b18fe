//go:build temporal

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/temporal"
)

// sdkLog is where the Temporal SDK's own logs go: warnings and worse, to
// stderr.
func (a *app) sdkLog() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("DYNWORKFLOW_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(quietCancels{slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level})})
}

// quietCancels drops the SDK's error line for an agent call cancelled
// because its run paused or stopped: that is the run going as asked, and
// a pause of a wide fan-out would print one per agent.
type quietCancels struct{ slog.Handler }

func (h quietCancels) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "Activity error." {
		cancelled := false
		r.Attrs(func(at slog.Attr) bool {
			if at.Key == "Error" && at.Value.String() == context.Canceled.Error() {
				cancelled = true
			}
			return !cancelled
		})
		if cancelled {
			return nil
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h quietCancels) WithAttrs(attrs []slog.Attr) slog.Handler {
	return quietCancels{h.Handler.WithAttrs(attrs)}
}

func (h quietCancels) WithGroup(name string) slog.Handler {
	return quietCancels{h.Handler.WithGroup(name)}
}

// dialTemporal connects to the Temporal of cfg, giving up after a while
// rather than hanging on an address nobody answers.
func (a *app) dialTemporal(ctx context.Context, cfg temporal.Config) (*temporal.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cfg, err := a.withBlobs(cfg)
	if err != nil {
		return nil, err
	}
	c, err := temporal.Dial(ctx, cfg, a.hosts(), a.sdkLog())
	if err != nil {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("%w (is the Temporal server up? see --temporal-address)", err)}
	}
	return c, nil
}

// withBlobs gives cfg its blob store: the one it names, else blobs/ in
// the state directory, which the workers and clients of one machine share.
func (a *app) withBlobs(cfg temporal.Config) (temporal.Config, error) {
	if cfg.Blobs != "" {
		return cfg, nil
	}
	root, err := a.stateRoot()
	if err != nil {
		return cfg, err
	}
	cfg.Blobs = filepath.Join(root, "blobs")
	return cfg, nil
}
