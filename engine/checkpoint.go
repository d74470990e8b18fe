package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
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
func (r *Run) startCheckpoint(ctx context.Context, sc *scope, req lang.CheckpointRequest, done lang.Done) {
	cc, err := r.policy.Checkpoint(ctx, sc, req)
	if err != nil {
		done(nil, err)
		return
	}
	path, fp := cc.Path, cc.FP
	if prior := cc.Prior; prior != nil {
		r.rt.bus.Publish(r.id, EventCheckpoint, CheckpointPayload{Path: path, Prompt: req.Prompt, Answer: prior.Result, Source: "journal",
			Phase: sc.Phase()})
		done(prior.Result, nil)
		return
	}
	call := &callInfo{Prompt: req.Prompt, Phase: sc.Phase()}
	if cc.Given != nil {
		r.giveCheckpoint(ctx, path, fp, call, cc.Given, done)
		return
	}
	// As for an agent: should its answer's line be lost, this one still
	// says an earlier answer was asked again, and is not to come back.
	r.append(&record{Type: recStarted, Path: path, Kind: "checkpoint", Fingerprint: fp, Call: call})
	ctx, release := r.callContext(ctx)
	r.calls.Add(1)
	done = onceDone(done)
	asked := time.Now()
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
			Call: call, Answer: &answerInfo{Source: source, DurMs: time.Since(asked).Milliseconds()}}
		// Journaled whatever becomes of ctx: a human gave this answer.
		if err := r.appendSync(context.Background(), rec); err != nil {
			r.fail(fmt.Errorf("journal checkpoint %s: %w", path, err))
			done(nil, err)
			return
		}
		r.rt.bus.Publish(r.id, EventCheckpoint, CheckpointPayload{Path: path, Prompt: req.Prompt, Answer: answer, Source: source,
			Phase: sc.Phase(), WaitedMs: time.Since(asked).Milliseconds()})
		done(answer, nil)
	}()
}

// giveCheckpoint journals the answer a fork gave a checkpoint, as a human's
// would be, and hands it to the script.
func (r *Run) giveCheckpoint(ctx context.Context, path, fp string, call *callInfo, answer json.RawMessage, done lang.Done) {
	rec := &record{Type: recFinished, Path: path, Kind: "checkpoint", Fingerprint: fp, Result: answer,
		Call: call, Answer: &answerInfo{Source: sourceGiven}}
	if err := r.appendSync(context.WithoutCancel(ctx), rec); err != nil {
		r.fail(fmt.Errorf("journal checkpoint %s: %w", path, err))
		done(nil, err)
		return
	}
	r.rt.bus.Publish(r.id, EventCheckpoint, CheckpointPayload{Path: path, Prompt: call.Prompt, Answer: answer, Source: sourceGiven})
	done(answer, nil)
}

// sourceGiven is the source of an answer a fork gave a call (fork
// --answer) instead of running or asking it.
const sourceGiven = "given"

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

// headlessAnswer applies the checkpoint's policy when no human answers.
func (r *Run) headlessAnswer(req lang.CheckpointRequest, source, why string) (json.RawMessage, string, error) {
	answer, err := callpolicy.Headless(req, why, "under `dynworkflow serve`")
	if err != nil {
		return nil, "", err
	}
	return answer, source, nil
}
