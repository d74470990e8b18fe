package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

// An embedding program starts a run, watches its events, and resumes it:
// the second execution replays every finished call instead of paying for
// it again.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "dynworkflow-example")
	defer os.RemoveAll(dir)

	st, err := store.Open(filepath.Join(dir, "state"), dir)
	if err != nil {
		panic(err)
	}
	rt, err := engine.New(engine.Config{
		Store:     st,
		Hosts:     lang.NewRegistry(jsvm.New()),
		Executors: executors.NewSet(simulate.New(simulate.Config{})),
		Cwd:       dir,
	})
	if err != nil {
		panic(err)
	}
	script, err := rt.Hosts().Load(lang.Source{Path: filepath.Join(dir, "hello.workflow.js"), Text: []byte(`
export const meta = { name: 'hello', description: 'three greetings' }
phase('Greet')
const names = ['ada', 'grace', 'linus']
const greetings = await parallel(names.map(n => () => agent('greet ' + n)))
return greetings.length`)})
	if err != nil {
		panic(err)
	}

	events := rt.Events().Subscribe(64, func(e engine.Event) bool { return e.Type == engine.EventPhase })
	run, err := rt.Start(ctx, engine.StartRequest{Script: script, Options: engine.DefaultOptions()})
	if err != nil {
		panic(err)
	}
	first, _ := run.Wait(ctx)
	fmt.Println("phase event:", (<-events.C).Payload.(engine.PhasePayload).Title)
	fmt.Println(first.Status, string(first.Result), "live:", first.Stats.Live)
	events.Close()

	again, err := rt.Resume(ctx, run.ID(), engine.ResumeRequest{})
	if err != nil {
		panic(err)
	}
	second, _ := again.Wait(ctx)
	fmt.Println(second.Status, string(second.Result), "replayed:", second.Stats.Replayed, "live:", second.Stats.Live)
	// Output:
	// phase event: Greet
	// completed 3 live: 3
	// completed 3 replayed: 3 live: 0
}
