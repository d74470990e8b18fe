package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dynworkflow/dynworkflow/lang"
)

// Responder answers checkpoints when a human can be reached (the server
// publishes them to the dashboard and API). Without one, checkpoints follow
// their headless policy.
type Responder interface {
	// Ask waits for an answer to req; it returns an error wrapping
	// ErrCheckpointAbort when nobody will answer.
	Ask(ctx context.Context, runID, path string, req lang.CheckpointRequest) (json.RawMessage, error)
}

// startCheckpoint answers a checkpoint from the journal, from a responder,
// or by its headless policy, and journals the answer so a resume replays it.
func (r *Run) startCheckpoint(ctx context.Context, f *frame, sc *scope, req lang.CheckpointRequest, done lang.Done) {
	path := sc.callPath("checkpoint")
	if ctx.Err() != nil {
		done(nil, context.Cause(ctx))
		return
	}
	fp := CheckpointFingerprint(req)
	if p, ok := r.replay.lookup(sc, path, fp, f.mode); ok {
		r.rt.bus.Publish(r.id, EventCheckpoint, CheckpointPayload{Path: path, Prompt: req.Prompt, Answer: p.result, Source: "journal"})
		done(p.result, nil)
		return
	}
	ctx, release := r.callContext(ctx)
	r.calls.Add(1)
	done = onceDone(done)
	go func() {
		defer r.calls.Done()
		defer release()
		defer func() {
			if x := recover(); x != nil {
				done(nil, r.recovered("checkpoint "+path, x))
			}
		}()
		answer, source, err := r.answerCheckpoint(ctx, path, req)
		if err != nil {
			done(nil, err)
			return
		}
		rec := &record{Type: recFinished, Path: path, Kind: "checkpoint", Fingerprint: fp, Result: answer,
			Call: &callInfo{Prompt: req.Prompt, Phase: sc.currentPhase()}, Answer: &answerInfo{Source: source}}
		// Journaled whatever becomes of ctx: a human gave this answer.
		if err := r.appendSync(context.Background(), rec); err != nil {
			r.fail(fmt.Errorf("journal checkpoint %s: %w", path, err))
			done(nil, err)
			return
		}
		r.rt.bus.Publish(r.id, EventCheckpoint, CheckpointPayload{Path: path, Prompt: req.Prompt, Answer: answer, Source: source})
		done(answer, nil)
	}()
}

func (r *Run) answerCheckpoint(parent context.Context, path string, req lang.CheckpointRequest) (json.RawMessage, string, error) {
	if resp := r.rt.cfg.Responder; resp != nil {
		ctx, cancel := parent, context.CancelFunc(func() {})
		if req.TimeoutMs > 0 {
			ctx, cancel = context.WithTimeoutCause(parent, time.Duration(req.TimeoutMs)*time.Millisecond, errCheckpointTimeout)
		}
		answer, err := resp.Ask(ctx, r.id, path, req)
		timedOut := errors.Is(context.Cause(ctx), errCheckpointTimeout) && parent.Err() == nil
		cancel()
		switch {
		case timedOut:
			// Nobody answered in time: the headless policy decides.
			return r.headlessAnswer(req, "timeout-default",
				fmt.Sprintf("nobody answered within %dms", req.TimeoutMs))
		case err != nil:
			return nil, "", err
		}
		if verr := req.Validate(answer); verr != nil {
			return nil, "", fmt.Errorf("checkpoint(): %w", verr)
		}
		return answer, "human", nil
	}
	return r.headlessAnswer(req, "headless-default", "nobody can give one in a headless run")
}

// errCheckpointTimeout ends the wait of a checkpoint with a timeoutMs.
var errCheckpointTimeout = errors.New("checkpoint timed out")

// headlessAnswer applies the checkpoint's policy when no human answers: its
// declared default, or abort.
func (r *Run) headlessAnswer(req lang.CheckpointRequest, source, why string) (json.RawMessage, string, error) {
	if req.Headless == "default" {
		return req.Default, source, nil
	}
	return nil, "", CheckpointAbortError(req, why, "under `dynworkflow serve`")
}
