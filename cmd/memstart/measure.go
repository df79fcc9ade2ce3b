package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/cmd/internal/workload"
)

// result is one run: start and reload durations, VmRSS after each (KiB) and
// the peak (VmHWM, KiB).
type result struct {
	start, reload       time.Duration
	cpuStart, cpuReload time.Duration // user+system CPU of the server
	rssStart, rssReload int64
	// rssTraffic is VmRSS after -traffic of evaluate calls (0 without).
	rssTraffic int64
	peak       int64
}

// tokenFile is the admin token the server writes into a new config dir.
const tokenFile = "api_token"

// measure starts the server on a fresh config dir of n rules, waits until
// it decides, rewrites config.yaml with the probe rule's action flipped and
// waits until the new policy decides.
func measure(o options, n int) (result, error) {
	var r result
	dir, err := os.MkdirTemp("", "memstart-")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(dir)
	cfgDir, ws := filepath.Join(dir, "config"), filepath.Join(dir, "ws")
	for _, d := range []string{cfgDir, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return r, err
		}
	}
	cfg := filepath.Join(cfgDir, "config.yaml")
	if err := writeFile(cfg, n, "deny"); err != nil {
		return r, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	args := append([]string{"-addr", "127.0.0.1:0", "-config-dir", cfgDir, "-workspace", ws}, o.serverArgs...)
	cmd := exec.CommandContext(ctx, o.server, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	base, err := listenAddr(stdout)
	if err != nil {
		return r, fmt.Errorf("%w (stderr: %.500s)", err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	token, err := os.ReadFile(filepath.Join(cfgDir, tokenFile))
	if err != nil {
		return r, err
	}
	c := client{base: base, token: strings.TrimSpace(string(token))}
	if err := c.waitForAction(ctx, "deny"); err != nil {
		return r, err
	}
	r.start = time.Since(began)
	pid := cmd.Process.Pid
	if r.cpuStart, err = cpuTime(pid); err != nil {
		return r, err
	}
	time.Sleep(o.settle)
	if r.rssStart, _, err = rss(pid); err != nil {
		return r, err
	}
	began = time.Now()
	if err := writeFile(cfg, n, "allow"); err != nil {
		return r, err
	}
	if err := c.waitForAction(ctx, "allow"); err != nil {
		return r, err
	}
	r.reload = time.Since(began)
	cpu, err := cpuTime(pid)
	if err != nil {
		return r, err
	}
	r.cpuReload = cpu - r.cpuStart
	time.Sleep(o.settle)
	if r.rssReload, r.peak, err = rss(pid); err != nil || o.traffic <= 0 {
		return r, err
	}
	if err := c.traffic(ctx, o.traffic); err != nil {
		return r, err
	}
	r.rssTraffic, r.peak, err = rss(pid)
	return r, err
}

// traffic sends the load generator's mix of evaluate calls (benign, match,
// path) on four connections for d: the heap then grows to what the
// collector's target allows.
func (c client) traffic(ctx context.Context, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	errc := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for j := g; ; j += 4 {
				call, _ := workload.Call([]string{"benign", "match", "path"}[j%3], j)
				body, _ := json.Marshal(call)
				if _, err := c.evaluate(ctx, string(body)); err != nil {
					if ctx.Err() != nil {
						err = nil
					}
					errc <- err
					return
				}
			}
		}()
	}
	var first error
	for g := 0; g < 4; g++ {
		if err := <-errc; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// writeFile writes config.yaml atomically (as an editor's save would).
func writeFile(path string, n int, probeAction string) error {
	tmp := path + ".memstart"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = writeConfig(w, n, probeAction)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

var listening = regexp.MustCompile(`listening on (http://[0-9.:]+)/`)

// listenAddr reads the server's stdout until it announces its address.
func listenAddr(stdout io.Reader) (string, error) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			return m[1], nil
		}
	}
	return "", errors.New("the server exited before it announced its address")
}

// rss reads VmRSS and VmHWM (KiB) of a process.
func rss(pid int) (cur, peak int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			cur = v
		case "VmHWM:":
			peak = v
		}
	}
	if cur == 0 {
		return 0, 0, errors.New("no VmRSS in /proc status")
	}
	return cur, peak, nil
}

// clockTick is the kernel's USER_HZ, the unit of /proc/<pid>/stat times
// (100 on every Linux port Go supports).
const clockTick = 10 * time.Millisecond

// cpuTime is the user+system CPU time a process has used so far. On a
// shared machine it is steadier than the wall time, which includes waiting
// for a core.
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(data, ')')
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// client calls the server with the admin token.
type client struct {
	base, token string
}

// waitForAction polls /readyz and then evaluates the probe command until
// the policy in force gives it the level want.
func (c client) waitForAction(ctx context.Context, want string) error {
	var last string
	for {
		level, err := c.probe(ctx)
		if err == nil && level == want {
			return nil
		}
		last = fmt.Sprintf("level %q, err %v", level, err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the probe to be %s: %s", want, last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (c client) probe(ctx context.Context) (string, error) {
	return c.evaluate(ctx, `{"tool_name":"bash","tool_args":{"command":"`+probeCommand+`"}}`)
}

// evaluate posts one call and returns its level.
func (c client) evaluate(ctx context.Context, body string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/api/v1/evaluate", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return "", fmt.Errorf("evaluate: %d %s", resp.StatusCode, b)
	}
	var v struct {
		Level string `json:"level"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return "", err
	}
	return v.Level, nil
}
