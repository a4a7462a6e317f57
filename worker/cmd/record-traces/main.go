// Command record-traces runs the development corpus's real agent traces
// (interceptor/detect/testdata/real) through the sample workflow TraceLoop
// on the embedded Temporal server, without the guard, and exports each
// run's history: a folder of histories of runs made without the guard,
// as a team has on its own server, for `worker analyze` (the README's
// trial). From the repository root:
//
//	go run ./worker/cmd/record-traces -out /tmp/trial -n 60 -labels /tmp/trial-labels.json
//	go run ./worker analyze --labels /tmp/trial-labels.json /tmp/trial
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/loopguard/loopguard/internal/traces"
	"github.com/loopguard/loopguard/testsuite"
	"github.com/loopguard/loopguard/worker/devserver"
)

func main() {
	out := flag.String("out", "", "directory to write the histories to (required)")
	dir := flag.String("traces", "interceptor/detect/testdata/real", "directory of the corpus's *.json.gz traces")
	labels := flag.String("labels", "", "also write the traces' labels (loop or not, onset call) to this file, for worker analyze --labels")
	n := flag.Int("n", 60, "how many traces to run, spread evenly over the corpus (0: all)")
	parallel := flag.Int("parallel", 4, "traces run at a time")
	timeout := flag.Duration("timeout", 15*time.Minute, "overall time limit")
	flag.Parse()
	if *out == "" || *n < 0 || *parallel <= 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := record(ctx, *dir, *out, *labels, *n, *parallel); err != nil {
		fmt.Fprintln(os.Stderr, "record-traces:", err)
		os.Exit(1)
	}
}

func record(ctx context.Context, dir, out, labelsPath string, n, parallel int) error {
	all, err := traces.Load(dir)
	if err != nil {
		return err
	}
	sample := all
	if n > 0 && n < len(all) {
		sample = make([]traces.Trace, n)
		for i := range sample {
			sample[i] = all[i*len(all)/n]
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	srv, err := devserver.Start(ctx, devserver.Options{Ephemeral: true, FreePorts: true, UIDisabled: true})
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()
	c, err := srv.NewClient(client.Options{Logger: quiet{}})
	if err != nil {
		return err
	}
	defer c.Close()
	const queue = "traces"
	w := worker.New(c, queue, worker.Options{}) // no guard: runs as a team's are before it
	traces.Register(w, traces.Nodes(sample))
	if err := w.Start(); err != nil {
		return err
	}
	defer w.Stop()

	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	errs := make([]error, len(sample))
	for i, tr := range sample {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			id := "trace-" + tr.Name
			run, err := traces.Run(ctx, c, queue, id, tr)
			if err == nil {
				err = testsuite.ExportHistoryFile(ctx, c, id, run, filepath.Join(out, tr.Name+".json"))
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w", sample[i].Name, err)
		}
	}
	fmt.Printf("%d histories in %s\n", len(sample), out)
	if labelsPath == "" {
		return nil
	}
	labels := testsuite.Labels{}
	for _, tr := range sample {
		labels["trace-"+tr.Name] = testsuite.Label{Loop: tr.Loop, Onset: tr.Onset}
	}
	data, err := json.MarshalIndent(labels, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(labelsPath, append(data, '\n'), 0o644)
}

// quiet drops the SDK's logs.
type quiet struct{}

func (quiet) Debug(string, ...any) {}
func (quiet) Info(string, ...any)  {}
func (quiet) Warn(string, ...any)  {}
func (quiet) Error(string, ...any) {}

var _ log.Logger = quiet{}
