package integration

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// pythonClientPolicy is the permissions section the Python client's tests
// expect (POLICY in clients/python/tests/test_remote_engine.py).
const pythonClientPolicy = `permissions:
  enabled: true
  schema: tiered_policy
  tools:
    bash: ask
    read_file: allow
  rules:
    - {id: ls_ok, tools: [bash], pattern: "ls *", action: allow}
    - {id: no_shred, tools: [bash], pattern: "shred *", action: deny}
  external_directory:
    "*": ask
`

// TestPythonClient runs the Python client's own unittest suite against a
// real server, then reads its calls back on the decisions page by agent.
func TestPythonClient(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is not installed (make deps installs it): %v", err)
	}
	s := StartServer(t, ServerOptions{ConfigYAML: pythonClientPolicy})
	policy, err := os.ReadFile(filepath.Join("..", "clients", "python", "tests", "test_remote_engine.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(policy), pythonClientPolicy) {
		t.Fatalf("the Python tests' POLICY differs from pythonClientPolicy; keep them the same")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-v", "clients/python/tests")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "TOOLGATE_URL="+s.URL, "TOOLGATE_TOKEN="+s.Token,
		"PYTHONDONTWRITEBYTECODE=1", "PYTHONPATH=clients/python")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	runErr := cmd.Run()
	report := out.String()
	if runErr != nil {
		t.Fatalf("python tests failed (%v):\n%s", runErr, report)
	}
	ran := regexp.MustCompile(`Ran (\d+) tests?`).FindStringSubmatch(report)
	if ran == nil || ran[1] == "0" || strings.Contains(report, "skipped") {
		t.Fatalf("the python tests must all run, none skipped:\n%s", report)
	}
	t.Logf("python client: ran %s tests", ran[1])

	html := adminPage(t, s, "/decisions?agent=jiuwenswarm")
	if !strings.Contains(html, `data-testid="decision-agent">jiuwenswarm<`) {
		t.Errorf("the decisions page filtered by agent=jiuwenswarm shows no jiuwenswarm row")
	}
	if strings.Contains(html, `data-testid="decision-agent">rest<`) {
		t.Errorf("the agent filter let a rest row through")
	}
	if !regexp.MustCompile(`<option value="jiuwenswarm" selected`).MatchString(html) {
		t.Errorf("the agent select does not show the filter in force")
	}
	if bad := adminPage(t, s, "/decisions?agent=nobody"); !strings.Contains(bad, "agent must be one of") {
		t.Errorf("an unknown agent is not explained on the page")
	}

	snippet := readmePython(t)
	run := exec.CommandContext(ctx, python, "-c", snippet)
	run.Dir = ".."
	run.Env = cmd.Env
	got, err := run.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(got), "allow tiered_policy:rules:rules[ls_ok]") {
		t.Errorf("the README's JiuwenSwarm snippet: err %v, output:\n%s", err, got)
	}
}

// readmePython is the python block of the README's "Use with JiuwenSwarm".
func readmePython(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Use with JiuwenSwarm\n")
	if !ok {
		t.Fatal(`README.md has no "## Use with JiuwenSwarm" section`)
	}
	_, block, ok := strings.Cut(section, "```python\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("the JiuwenSwarm section has no python block")
	}
	return block
}

// adminPage signs in to the admin pages with the server's token and
// returns one page's HTML.
func adminPage(t *testing.T, s *Server, path string) string {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	get := func(p string) string {
		resp, err := client.Get(s.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return b.String()
	}
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(get("/login"))
	if m == nil {
		t.Fatalf("no csrf token on the login page")
	}
	req, _ := http.NewRequest("POST", s.URL+"/login", strings.NewReader(url.Values{"token": {s.Token}, "csrf_token": {m[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", s.URL)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return get(path)
}
