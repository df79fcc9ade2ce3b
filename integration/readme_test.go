package integration

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// readmeCurls returns the curl lines of the README's "## The API" section.
func readmeCurls(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## The API\n")
	if !ok {
		t.Fatal(`README.md has no "## The API" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "curl ") {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// TestReadmeCurlExamples runs each curl line of the README with bash,
// TOOLGATE_URL and TOKEN set to a test server, and wants each to succeed.
func TestReadmeCurlExamples(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatal("curl is needed to test the README examples")
	}
	s := StartServer(t, ServerOptions{})
	curls := readmeCurls(t)
	if len(curls) < 3 {
		t.Fatalf("found %d curl examples, want at least 3", len(curls))
	}
	for _, line := range curls {
		cmd := exec.Command("bash", "-c", line)
		cmd.Env = append(os.Environ(), "TOOLGATE_URL="+s.URL, "TOKEN="+s.Token)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s\nfailed: %v\n%s", line, err, out)
		}
	}
	if !strings.Contains(s.ReadFile("config.yaml"), "cli_rule_bash_ls_*") {
		t.Errorf("the command example did not reach config.yaml")
	}
}
