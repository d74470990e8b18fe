package temporal

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/dynworkflow/dynworkflow/engine/callpolicy"
	"github.com/dynworkflow/dynworkflow/lang"
)

// waitingCheckpoint is a checkpoint waiting for `respond`.
type waitingCheckpoint struct {
	cp   *Checkpoint
	done lang.Done
}

// startCheckpoint answers a checkpoint from an earlier execution, by its
// headless policy when nobody can answer, or else waits for a response
// (the respond update) until its timeoutMs, if it has one.
func (x *execution) startCheckpoint(sc *scope, req lang.CheckpointRequest, done lang.Done) {
	cc, err := x.policy.Checkpoint(x.goctx, sc, req)
	if err != nil {
		done(nil, err)
		return
	}
	path := cc.Path
	cp := &Checkpoint{Path: path, Fingerprint: cc.FP, Phase: sc.Phase(), Request: req, AskedAt: x.now().UTC()}
	x.checkpoints = append(x.checkpoints, cp)
	if prior := cc.Prior; prior != nil {
		x.answer(cp, prior.Result, "journal")
		done(prior.Result, nil)
		return
	}
	if cc.Given != nil {
		x.answer(cp, cc.Given, "given")
		done(cc.Given, nil)
		return
	}
	if !x.in.Human {
		answer, err := x.headless(cp, "headless-default", "nobody can give one in a headless run")
		done(answer, err)
		return
	}
	cp.Pending = true
	x.waiting[path] = &waitingCheckpoint{cp: cp, done: done}
	if req.TimeoutMs <= 0 {
		return
	}
	workflow.Go(x.calls, func(wc workflow.Context) {
		if workflow.Sleep(wc, time.Duration(req.TimeoutMs)*time.Millisecond) != nil {
			return // the execution is ending
		}
		w, ok := x.waiting[path]
		if !ok {
			return // answered in time
		}
		delete(x.waiting, path)
		w.done(x.headless(cp, "timeout-default", fmt.Sprintf("nobody answered within %dms", req.TimeoutMs)))
	})
}

// headless applies the checkpoint's policy when no human answers: its
// declared default, or abort.
func (x *execution) headless(cp *Checkpoint, source, why string) (json.RawMessage, error) {
	answer, err := callpolicy.Headless(cp.Request, why, "on Temporal with --await-checkpoints")
	if err != nil {
		cp.Pending = false
		return nil, err
	}
	x.answer(cp, answer, source)
	return answer, nil
}

func (x *execution) answer(cp *Checkpoint, answer json.RawMessage, source string) {
	cp.Pending, cp.Answer, cp.Source, cp.AnsweredAt = false, answer, source, x.now().UTC()
}

// validateResponse rejects a response before it is written to the
// workflow's history: an unknown checkpoint, or an answer that does not
// fit its kind and choices.
func (x *execution) validateResponse(_ workflow.Context, r Response) error {
	w, ok := x.waiting[r.Path]
	if !ok {
		return fmt.Errorf("no checkpoint is waiting at %s", r.Path)
	}
	if err := w.cp.Request.Validate(r.Answer); err != nil {
		return fmt.Errorf("%s does not answer %q: %w", r.Answer, w.cp.Request.Prompt, err)
	}
	return nil
}

// respond answers a waiting checkpoint: the respond update's handler.
func (x *execution) respond(_ workflow.Context, r Response) error {
	w, ok := x.waiting[r.Path]
	if !ok {
		return fmt.Errorf("no checkpoint is waiting at %s", r.Path)
	}
	delete(x.waiting, r.Path)
	x.answer(w.cp, r.Answer, "human")
	w.done(r.Answer, nil)
	return nil
}
