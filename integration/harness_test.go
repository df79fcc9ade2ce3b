package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// binary is the toolgate binary built once for the whole package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "toolgate-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, "toolgate")
	build := exec.Command("go", "build", "-o", binary, "../cmd/server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build toolgate:", err)
		os.Exit(2)
	}
	// pgtest.Main runs the tests, then stops the PostgreSQL cluster the
	// replica tests share (pgtest.Shared), if they started one.
	code := pgtest.Main(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// Server is one running toolgate process.
type Server struct {
	t         testing.TB
	URL       string
	Addr      string
	ConfigDir string
	Workspace string
	Token     string
	cmd       *exec.Cmd
	out       *syncBuffer
	args      []string
	exited    chan struct{}
}

// syncBuffer collects the server's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// ServerOptions change how a server starts.
type ServerOptions struct {
	// ConfigDir reuses a config dir (for restarts); empty makes a temp one.
	ConfigDir string
	// ConfigYAML, if set, is written as config.yaml before the start.
	ConfigYAML string
	// BuiltinYAML, if set, is written as builtin_rules.yaml before the start.
	BuiltinYAML string
	// Args are extra flags.
	Args []string
}

// freeAddr returns a free loopback address.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// StartServer starts toolgate and waits until /healthz answers. It is
// stopped when the test ends.
func StartServer(t testing.TB, o ServerOptions) *Server {
	t.Helper()
	dir := o.ConfigDir
	if dir == "" {
		dir = t.TempDir()
	}
	if o.ConfigYAML != "" {
		writeFile(t, filepath.Join(dir, "config.yaml"), o.ConfigYAML)
	}
	if o.BuiltinYAML != "" {
		writeFile(t, filepath.Join(dir, "builtin_rules.yaml"), o.BuiltinYAML)
	}
	ws := filepath.Join(t.TempDir(), "workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &Server{t: t, ConfigDir: dir, Workspace: ws}
	s.args = append([]string{"--config-dir", dir, "--workspace", ws}, o.Args...)
	s.start()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) start() {
	t := s.t
	t.Helper()
	s.Addr = freeAddr(t)
	s.URL = "http://" + s.Addr
	// The tests send many wrong tokens from one address on purpose; the
	// throttle's own test turns it back on (a later flag wins).
	args := append([]string{"--addr", s.Addr, "--auth-failures-per-minute", "0"}, s.args...)
	s.cmd = exec.Command(binary, args...)
	s.out = &syncBuffer{}
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	s.cmd.Env = append(os.Environ(), "HOME="+filepath.Dir(s.Workspace))
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.exited = make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(s.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("toolgate exited at start:\n%s", s.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("toolgate did not become healthy:\n%s", s.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(s.ConfigDir, "api_token"))
	if err != nil {
		t.Fatal(err)
	}
	s.Token = strings.TrimSpace(string(tok))
}

// Stop ends the server with SIGTERM (SIGKILL after 10 s).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// Kill ends the server with SIGKILL, at once.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Restart starts the server again on the same config dir and workspace.
func (s *Server) Restart() {
	s.Stop()
	s.start()
}

// Output is what the server printed so far.
func (s *Server) Output() string { return s.out.String() }

// Do sends a request with the admin token and returns status and body.
func (s *Server) Do(method, path string, body any) (int, []byte) {
	return s.DoToken(s.Token, method, path, body)
}

// DoToken sends a request with a token ("" for none).
func (s *Server) DoToken(token, method, path string, body any) (int, []byte) {
	s.t.Helper()
	resp := s.Request(token, method, path, body, nil)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// Request sends a request; body may be nil, a string or []byte (sent as
// is), or any value (sent as JSON).
func (s *Server) Request(token, method, path string, body any, header http.Header) *http.Response {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp
}

// DecodeJSON decodes a body or fails the test.
func DecodeJSON[T any](t testing.TB, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return v
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// ReadFile reads a file of the config dir.
func (s *Server) ReadFile(name string) string {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join(s.ConfigDir, name))
	if err != nil {
		s.t.Fatal(err)
	}
	return string(data)
}

// WaitFor polls cond every 10 ms until it holds or the timeout passes.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
