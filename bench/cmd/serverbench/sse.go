package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/web"
)

// sse attaches clients to the event stream, starts a run of agents calls,
// and checks that each client saw every event from the first to the run's
// end exactly once, with no reset.
func sse(ctx context.Context, descPath string, clients, agents int) error {
	desc, err := web.ReadDescriptor(descPath)
	if err != nil {
		return err
	}
	cl := web.NewClient(desc.URL, desc.Token)
	ov, err := cl.Overview(ctx)
	if err != nil {
		return err
	}
	before := rssKB(desc.PID)
	type tally struct {
		events, gaps, resets int
		last, endSeq         int64
	}
	tallies := make([]tally, clients)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	start := ov.Runtime.Sequence
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := &tallies[i]
			t.last = start
			err := cl.Stream(ctx, start, "", func(ev web.StreamEvent) error {
				if ev.Reset() {
					t.resets++
					return nil
				}
				if ev.Sequence != t.last+1 {
					t.gaps++
				}
				t.last = ev.Sequence
				t.events++
				// The benchmark's run is the only activity: its
				// run.status ends it.
				if ev.Type == "run.status" {
					t.endSeq = ev.Sequence
					return web.ErrStopStream
				}
				return nil
			})
			if err != nil && !errors.Is(err, context.Canceled) {
				fmt.Fprintln(os.Stderr, "serverbench: client:", err)
			}
		}()
	}
	// Each client has subscribed once the server counts its stream.
	waitStreams(ctx, cl, clients)
	afterConnect := rssKB(desc.PID)
	script := fmt.Sprintf("export const meta = { name: 'bench-sse', description: 'fan-out' }\n"+
		"return (await parallel(Array.from({ length: %d }, (_, i) => () => agent('task ' + i)))).length\n", agents)
	concurrency := 16
	began := time.Now()
	_, err = cl.Start(ctx, web.StartRequest{Script: script, Options: &web.RunOptions{Concurrency: &concurrency}})
	if err != nil {
		return err
	}
	wg.Wait()
	took := time.Since(began)
	peak := rssKB(desc.PID)
	lost, resets, want := 0, 0, int64(0)
	for _, t := range tallies {
		if t.endSeq > want {
			want = t.endSeq
		}
	}
	for _, t := range tallies {
		if t.gaps > 0 || t.endSeq != want || t.events != int(want-start) {
			lost++
		}
		resets += t.resets
	}
	fmt.Printf("sse: %d clients, a %d-agent run: %d events each, %d clients missed or repeated events, %d resets, run took %v\n",
		clients, agents, want-start, lost, resets, took.Round(time.Millisecond))
	if before > 0 {
		fmt.Printf("sse: server RSS %d KB idle, %d KB with %d clients attached (%.1f KB per client), %d KB after the run\n",
			before, afterConnect, clients, float64(afterConnect-before)/float64(clients), peak)
	}
	return nil
}

// waitStreams waits until the server reports n open streams.
func waitStreams(ctx context.Context, cl *web.Client, n int) {
	for ctx.Err() == nil {
		h, err := cl.Health(ctx)
		if err == nil && h.Streams >= int64(n) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// rssKB is the resident set of process pid in KB, from /proc (0 elsewhere).
func rssKB(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
