// Command memstart measures what the real server binary costs to start with
// a large policy: the time from exec to the first answered
// /readyz, the resident set size (VmRSS) once started, and the RSS after one
// reload of config.yaml. It writes a fresh config dir per run, so runs do
// not share state, and prints one line per run and the range per size.
//
//	go build -o /tmp/toolgate-server ./cmd/server
//	go run ./cmd/memstart -server /tmp/toolgate-server -rules 10000,100000 -runs 3
//
// The server is started with the flags after "--" (e.g. -- -gc-percent 100).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "memstart:", err)
		os.Exit(1)
	}
}

// options is the command line.
type options struct {
	server     string
	sizes      []int
	runs       int
	settle     time.Duration
	timeout    time.Duration
	traffic    time.Duration
	serverArgs []string
}

func parse(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("memstart", flag.ContinueOnError)
	fs.StringVar(&o.server, "server", "", "the server binary to measure (built from ./cmd/server)")
	sizes := fs.String("rules", "10000,100000", "comma-separated rule counts")
	fs.IntVar(&o.runs, "runs", 3, "runs per rule count (each on a fresh config dir)")
	fs.DurationVar(&o.settle, "settle", 5*time.Second, "wait after ready and after the reload before reading VmRSS (the server returns a load's garbage to the OS shortly after it; on a busy machine that takes seconds)")
	fs.DurationVar(&o.traffic, "traffic", 0, "after the reload, send evaluate calls for this long on 4 connections, then read VmRSS again (0: none)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up on a start or reload after this long")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.serverArgs = fs.Args()
	if o.server == "" {
		return o, errors.New("-server is required")
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-rules: bad count %q", s)
		}
		o.sizes = append(o.sizes, n)
	}
	return o, nil
}

func run(args []string, out io.Writer) error {
	o, err := parse(args)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "server %s %s, settle %v\n", o.server, strings.Join(o.serverArgs, " "), o.settle)
	fmt.Fprintln(out, "rules\trun\tstart_s\tstart_cpu_s\trss_start_MB\treload_s\treload_cpu_s\trss_reload_MB\trss_traffic_MB\tpeak_MB")
	for _, n := range o.sizes {
		var all []result
		for i := 1; i <= o.runs; i++ {
			r, err := measure(o, n)
			if err != nil {
				return fmt.Errorf("%d rules, run %d: %w", n, i, err)
			}
			fmt.Fprintf(out, "%d\t%d\t%.2f\t%.2f\t%.0f\t%.2f\t%.2f\t%.0f\t%.0f\t%.0f\n", n, i, r.start.Seconds(), r.cpuStart.Seconds(), mb(r.rssStart),
				r.reload.Seconds(), r.cpuReload.Seconds(), mb(r.rssReload), mb(r.rssTraffic), mb(r.peak))
			all = append(all, r)
		}
		fmt.Fprintf(out, "%d\trange\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n,
			span(all, func(r result) float64 { return r.start.Seconds() }, "%.2f"),
			span(all, func(r result) float64 { return r.cpuStart.Seconds() }, "%.2f"),
			span(all, func(r result) float64 { return mb(r.rssStart) }, "%.0f"),
			span(all, func(r result) float64 { return r.reload.Seconds() }, "%.2f"),
			span(all, func(r result) float64 { return r.cpuReload.Seconds() }, "%.2f"),
			span(all, func(r result) float64 { return mb(r.rssReload) }, "%.0f"),
			span(all, func(r result) float64 { return mb(r.rssTraffic) }, "%.0f"),
			span(all, func(r result) float64 { return mb(r.peak) }, "%.0f"))
	}
	return nil
}

func mb(kib int64) float64 { return float64(kib) / 1024 }

// span is "min-max" of f over rs.
func span(rs []result, f func(result) float64, format string) string {
	lo, hi := f(rs[0]), f(rs[0])
	for _, r := range rs[1:] {
		lo, hi = min(lo, f(r)), max(hi, f(r))
	}
	return fmt.Sprintf(format+"-"+format, lo, hi)
}
