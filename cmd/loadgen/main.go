// Command loadgen drives POST /api/v1/evaluate (or /evaluate/batch) of a
// toolgate server on loopback with N connections for T seconds and prints
// throughput, latency percentiles, the server's memory and how many
// decisions its decision log dropped during the run (a full queue).
//
//	loadgen -url http://127.0.0.1:8080 -token $TOKEN -c 64 -d 10s [-rate 15000] [-batch 100] [-pid 1234] [-populate $WORKSPACE]
//
// With -get /healthz it sends GET /healthz instead, on the same transport
// and connections, so that a route that does no work can be compared with
// evaluate on one server.
//
// With -against /healthz -rounds N it alternates the two N times and prints
// the ratio of evaluate's throughput to that route's, round by round and
// as a median: the figure a busy shared machine makes too noisy to read
// from one pair of runs.
//
// With -serve-noop it is instead the server: a net/http server that
// answers every request with a fixed decision, to measure what HTTP alone
// costs on the machine.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/cmd/internal/workload"
)

type config struct {
	url, token, mix string
	// get, when set, is the path every request GETs (no body) instead of
	// POSTing calls to evaluate.
	get          string
	conns, batch int
	dur          time.Duration
	pid          int
	populate     string
	rate         float64
	transport    string
	// against, when set, is the path (e.g. /healthz) each round GETs
	// before it runs the mix, rounds times, to report evaluate's
	// throughput over that route's (see compare).
	against string
	rounds  int
}

func main() {
	var c config
	flag.StringVar(&c.url, "url", "http://127.0.0.1:8080", "server base URL (loopback only)")
	flag.StringVar(&c.token, "token", os.Getenv("TOOLGATE_TOKEN"), "bearer token with the evaluate right")
	flag.IntVar(&c.conns, "c", 16, "connections")
	flag.DurationVar(&c.dur, "d", 10*time.Second, "duration")
	flag.IntVar(&c.batch, "batch", 0, "calls per request on /api/v1/evaluate/batch (0: single /evaluate)")
	flag.StringVar(&c.mix, "mix", "benign,match,path", "comma-separated call kinds: benign, match, path, long")
	flag.IntVar(&c.pid, "pid", 0, "server process id, to report VmRSS/VmHWM from /proc")
	flag.Float64Var(&c.rate, "rate", 0, "requests/s offered in all, spread evenly over the connections (open loop: latency counts from when each request was due); 0 sends each request as soon as the last one is answered")
	flag.StringVar(&c.transport, "transport", defaultTransport, "events: all connections on one thread with epoll (Linux); goroutines: one goroutine per connection")
	flag.StringVar(&c.get, "get", "", "GET this path (e.g. /healthz) instead of POSTing calls to evaluate: same connections, transport and token header, no body (-mix and -batch do not apply)")
	flag.StringVar(&c.populate, "populate", "", "create the files path calls name (src/pkg*/file*.go) under this dir, the server's workspace, first")
	flag.StringVar(&c.against, "against", "", "compare the mix with GETs of this path (e.g. /healthz): each of -rounds rounds runs the GETs for -d, then the mix for -d, and the ratio of their throughputs is printed, with the median over the rounds")
	flag.IntVar(&c.rounds, "rounds", 6, "rounds of -against")
	serve := flag.String("serve-noop", "", "instead of driving a server, be one: answer every request on this loopback address with a fixed decision (the HTTP floor)")
	flag.Parse()
	var err error
	if *serve != "" {
		err = serveNoop(*serve)
	} else {
		err = run(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func checkLoopback(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.Equal(net.IPv4(127, 0, 0, 1)) {
		return fmt.Errorf("-url must be on 127.0.0.1, got %q", u.Host)
	}
	return nil
}

// rounds is how many request bodies each kind of the mix gets: single
// calls cycle through rounds different files, batches through
// rounds*batch.
func rounds(c config) int {
	if c.batch > 0 {
		return 4
	}
	return 50
}

// bodies builds the request bodies: rounds of one body per kind of the mix,
// in mix order, so that the kinds stay evenly mixed.
func bodies(c config) ([][]byte, error) {
	var out [][]byte
	for r := 0; r < rounds(c); r++ {
		for _, name := range strings.Split(c.mix, ",") {
			kind := strings.TrimSpace(name)
			var v any
			call, ok := workload.Call(kind, r)
			v = call
			if !ok {
				return nil, fmt.Errorf("unknown -mix kind %q (known: %s)", name, strings.Join(workload.Kinds(), ", "))
			}
			if c.batch > 0 {
				batch := workload.Batch{Calls: make([]workload.Request, c.batch)}
				for i := range batch.Calls {
					batch.Calls[i], _ = workload.Call(kind, r*c.batch+i)
				}
				v = batch
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// requests are the prebuilt requests the transports cycle through: one
// GET of c.get, or one POST per body of the mix.
func requests(c config, host string) ([][]byte, error) {
	if c.get != "" {
		if c.batch > 0 || !strings.HasPrefix(c.get, "/") {
			return nil, fmt.Errorf("-get takes a path starting with / and no -batch, got %q", c.get)
		}
		return [][]byte{buildGet(host, c.get, c.token)}, nil
	}
	reqBodies, err := bodies(c)
	if err != nil {
		return nil, err
	}
	path := "/api/v1/evaluate"
	if c.batch > 0 {
		path = "/api/v1/evaluate/batch"
	}
	reqs := make([][]byte, len(reqBodies))
	for i, b := range reqBodies {
		reqs[i] = buildRequest(host, path, c.token, b)
	}
	return reqs, nil
}

func run(c config) error {
	if err := checkLoopback(c.url); err != nil {
		return err
	}
	if c.conns < 1 || c.dur <= 0 || c.rate < 0 {
		return errors.New("-c and -d must be positive, -rate not negative")
	}
	if c.populate != "" {
		if err := workload.Populate(c.populate); err != nil {
			return err
		}
	}
	if c.against != "" {
		return compare(os.Stdout, c)
	}
	m, err := measure(c)
	if err != nil {
		return err
	}
	m.report(os.Stdout, c)
	if m.res.failures > 0 {
		return fmt.Errorf("%d requests failed", m.res.failures)
	}
	return nil
}

// measurement is one run's figures: what the transport counted, how long
// it took, the CPU time the server and loadgen used meanwhile, and the
// decision log's drop counter before and after.
type measurement struct {
	res                    result
	elapsed                float64 // seconds
	serverCPU, selfCPU     time.Duration
	dropped0, dropped1     float64
	okDropped0, okDropped1 bool
}

// perSecond is the requests answered per second.
func (m measurement) perSecond() float64 { return float64(m.res.requests) / m.elapsed }

// serverCPUPerRequest is the server's CPU time per request, 0 when the
// server's was not read (no -pid) or nothing was answered.
func (m measurement) serverCPUPerRequest() time.Duration {
	if m.res.requests == 0 {
		return 0
	}
	return m.serverCPU / time.Duration(m.res.requests)
}

// measure drives the server as c says for c.dur and returns its figures.
func measure(c config) (measurement, error) {
	u, _ := url.Parse(c.url)
	reqs, err := requests(c, u.Host)
	if err != nil {
		return measurement{}, err
	}
	var m measurement
	m.dropped0, m.okDropped0 = logDropped(c.url, c.token)
	cpu0 := processCPU(c.pid)
	self0 := processCPU(os.Getpid())
	start := time.Now()
	end := start.Add(c.dur)
	switch c.transport {
	case "events":
		m.res, err = runEvents(c, u.Host, reqs, start, end)
	case "goroutines":
		m.res = runGoroutines(c, u.Host, reqs, start, end)
	default:
		err = fmt.Errorf("-transport must be events or goroutines, got %q", c.transport)
	}
	if err != nil {
		return measurement{}, err
	}
	m.elapsed = time.Since(start).Seconds()
	if cpu1 := processCPU(c.pid); cpu1 >= cpu0 {
		m.serverCPU = cpu1 - cpu0
	}
	m.selfCPU = processCPU(os.Getpid()) - self0
	m.dropped1, m.okDropped1 = logDropped(c.url, c.token)
	return m, nil
}

// report prints a run's figures.
func (m measurement) report(w io.Writer, c config) {
	res := m.res
	per := int64(1)
	if c.batch > 0 {
		per = int64(c.batch)
	}
	if c.get != "" {
		fmt.Fprintf(w, "connections %d, duration %.1fs, GET %s, transport %s\n", c.conns, m.elapsed, c.get, c.transport)
	} else {
		fmt.Fprintf(w, "connections %d, duration %.1fs, batch %d, mix %s, transport %s\n", c.conns, m.elapsed, c.batch, c.mix, c.transport)
	}
	if c.rate > 0 {
		fmt.Fprintf(w, "open loop: %.0f requests/s offered; latency counts from when each request was due\n", c.rate)
	}
	fmt.Fprintf(w, "requests %d (%d failed), %.0f requests/s, %.0f decisions/s\n", res.requests, res.failures, m.perSecond(), float64(res.requests*per)/m.elapsed)
	fmt.Fprintf(w, "latency p50 %s, p90 %s, p99 %s, p99.9 %s, max %s\n", us(res.hist.ValueAtQuantile(50)), us(res.hist.ValueAtQuantile(90)),
		us(res.hist.ValueAtQuantile(99)), us(res.hist.ValueAtQuantile(99.9)), us(res.hist.Max()))
	if c.pid > 0 {
		fmt.Fprintln(w, serverMemory(c.pid))
		if res.requests > 0 {
			fmt.Fprintf(w, "server CPU %.1fs (%.0f µs/request), loadgen CPU %.1fs (%.0f µs/request)\n",
				m.serverCPU.Seconds(), float64(m.serverCPU.Microseconds())/float64(res.requests),
				m.selfCPU.Seconds(), float64(m.selfCPU.Microseconds())/float64(res.requests))
		}
	}
	if c.get == "" {
		fmt.Fprintln(w, droppedLine(m.dropped0, m.dropped1, m.okDropped0, m.okDropped1, res.requests*per))
	}
}

// schedule paces one connection. In open loop (-rate) request k of
// connection w is due at start + (k + w/conns) * conns/rate, and a
// connection that falls behind sends at once, so that a slow answer delays
// the requests behind it and their latency shows it (no coordinated
// omission). In closed loop each request is due when it is sent.
type schedule struct {
	start    time.Time
	interval time.Duration
	offset   time.Duration
	k        int64
}

func newSchedule(c config, w int, start time.Time) *schedule {
	s := &schedule{start: start}
	if c.rate > 0 {
		s.interval = time.Duration(float64(c.conns) / c.rate * float64(time.Second))
		s.offset = s.interval * time.Duration(w) / time.Duration(c.conns)
	}
	return s
}

// nextDue returns when the next request is due, without waiting; false
// when that would be after end.
func (s *schedule) nextDue(end time.Time) (time.Time, bool) {
	if s.interval == 0 {
		return time.Now(), true
	}
	due := s.start.Add(s.offset + time.Duration(s.k)*s.interval)
	s.k++
	return due, due.Before(end)
}

// next waits until the next request is due and returns when that was;
// false when it would be due after end.
func (s *schedule) next(end time.Time) (time.Time, bool) {
	due, ok := s.nextDue(end)
	if !ok {
		return due, false
	}
	if d := time.Until(due); d > 0 {
		time.Sleep(d)
	}
	return due, true
}

func us(v int64) string { return (time.Duration(v) * time.Microsecond).String() }

// processCPU is the user+system CPU time of a process so far, from
// /proc/<pid>/stat (0 when pid is 0 or unreadable).
func processCPU(pid int) time.Duration {
	if pid <= 0 {
		return 0
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; fields after its ")" are
	// fixed: utime and stime are fields 14 and 15, in clock ticks.
	_, rest, ok := strings.Cut(string(raw), ") ")
	if !ok {
		return 0
	}
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0
	}
	const ticksPerSecond = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticksPerSecond
}

// serverMemory reads VmRSS and VmHWM of a process from /proc.
func serverMemory(pid int) string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "server memory: " + err.Error()
	}
	var parts []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "VmHWM:") {
			parts = append(parts, strings.Join(strings.Fields(line), " "))
		}
	}
	return "server memory: " + strings.Join(parts, ", ")
}
