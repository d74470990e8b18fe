package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/dynworkflow/dynworkflow/engine"
	"github.com/dynworkflow/dynworkflow/engine/store"
	"github.com/dynworkflow/dynworkflow/executors"
	"github.com/dynworkflow/dynworkflow/executors/simulate"
	"github.com/dynworkflow/dynworkflow/jsvm"
	"github.com/dynworkflow/dynworkflow/lang"
)

const smallRun = `export const meta = { name: 'bench-small', description: 'one call' }
return await agent('task ' + args.i)
`

// populate makes n completed runs of one call each, eight at a time.
func populate(ctx context.Context, stateDir, project string, n int) error {
	st, err := store.Open(stateDir, project)
	if err != nil {
		return err
	}
	rt, err := engine.New(engine.Config{Store: st, Hosts: lang.NewRegistry(jsvm.New()),
		Executors: executors.NewSet(simulate.New(simulate.Config{})), Cwd: project})
	if err != nil {
		return err
	}
	path := filepath.Join(project, "small.workflow.js")
	if err := os.WriteFile(path, []byte(smallRun), 0o644); err != nil {
		return err
	}
	script, err := rt.Hosts().LoadFile(path)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r, err := rt.Start(ctx, engine.StartRequest{Script: script, Args: []byte(fmt.Sprintf(`{"i":%d}`, i)), Options: engine.DefaultOptions()})
			if err == nil {
				var o engine.Outcome
				if o, err = r.Wait(ctx); err == nil && o.Status != engine.StatusCompleted {
					err = fmt.Errorf("run %s: %s", o.RunID, o.Status)
				}
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	fmt.Printf("populated %d runs\n", n)
	return nil
}
