package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/dynworkflow/dynworkflow/web"
)

// overview sends GET /api/overview at rate per second, open-loop (a slow
// answer does not delay the next request), and prints percentiles.
func overview(ctx context.Context, descPath string, rate int, d time.Duration) error {
	desc, err := web.ReadDescriptor(descPath)
	if err != nil {
		return err
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	get := func() (time.Duration, int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, desc.URL+"/api/overview", nil)
		req.Header.Set("Authorization", "Bearer "+desc.Token)
		start := time.Now()
		res, err := hc.Do(req)
		if err != nil {
			return 0, 0, err
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return 0, 0, fmt.Errorf("status %d", res.StatusCode)
		}
		return time.Since(start), int(n), nil
	}
	// Warm up: connections, page cache.
	for range 20 {
		if _, _, err := get(); err != nil {
			return err
		}
	}
	var (
		mu    sync.Mutex
		lat   []time.Duration
		size  int
		fails int
		wg    sync.WaitGroup
	)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.After(d)
loop:
	for {
		select {
		case <-end:
			break loop
		case <-tick.C:
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, n, err := get()
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					fails++
					return
				}
				lat, size = append(lat, l), n
			}()
		}
	}
	wg.Wait()
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	fmt.Printf("overview: %d requests at %d/s over %v, %d failed, body %d KB\n", len(lat), rate, d, fails, size/1024)
	fmt.Printf("overview latency: p50 %v  p90 %v  p99 %v  max %v\n",
		pct(0.50).Round(10*time.Microsecond), pct(0.90).Round(10*time.Microsecond),
		pct(0.99).Round(10*time.Microsecond), lat[len(lat)-1].Round(10*time.Microsecond))
	return nil
}
