package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"

	"github.com/toolgate/toolgate/importer"
)

// exitPartial is an import that left some entries out or carried them
// over more strictly (each is printed with the reason); what it could
// convert was printed, and with --write written.
const exitPartial = 3

// maxImportFile caps the file an import reads: settings files are small.
const maxImportFile = 4 << 20

// importOptions are the flags of `toolgate import`.
type importOptions struct {
	conn
	write   bool
	project string
	home    string
}

// runImport is `toolgate import AGENT FILE [--write]` (docs/import.md):
// it converts the agent's permission settings, prints the permissions
// section it would write as YAML on stdout and every entry it could not
// carry over on stderr, and with --write adds what the policy lacks
// through the REST API, as the pages' edits do.
func runImport(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	var o importOptions
	fs := flag.NewFlagSet("toolgate import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addConnFlags(fs, &o.conn, getenv)
	fs.BoolVar(&o.write, "write", false, "add the converted tool levels and rules to the server's policy")
	fs.StringVar(&o.project, "project", "", "the project root the file's relative paths name (default: found from the file's place)")
	fs.StringVar(&o.home, "home", "", "the home directory ~/ names (default: yours)")
	agent, file, rest := "", "", args
	if len(rest) > 0 && rest[0] != "" && rest[0][0] != '-' {
		agent, rest = rest[0], rest[1:]
	}
	if len(rest) > 0 && rest[0] != "" && rest[0][0] != '-' {
		file, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return exitError
	}
	if agent == "" || file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: toolgate import claude-code|codex|gemini|opencode FILE [--write] [--project DIR] [--home DIR]")
		return exitError
	}
	res, err := convertFile(agent, file, &o)
	if err != nil {
		return failed(stderr, "toolgate import", err)
	}
	text, err := res.YAML()
	if err != nil {
		return failed(stderr, "toolgate import", err)
	}
	fmt.Fprint(stdout, text)
	fmt.Fprint(stderr, res.Report())
	if o.write {
		if code := writeImport(o.conn, res, stderr); code != exitOK {
			return code
		}
	}
	if !res.Complete() {
		fmt.Fprintf(stderr, "toolgate import: %d entries not carried over as they decide in %s (listed above)\n", len(res.Problems), agent)
		return exitPartial
	}
	return exitOK
}

// convertFile reads and converts one agent's file.
func convertFile(agent, file string, o *importOptions) (*importer.Result, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxImportFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxImportFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxImportFile)
	}
	if o.home == "" {
		o.home, _ = os.UserHomeDir()
	}
	opts := importer.Options{Project: o.project, Home: filepath.ToSlash(o.home)}
	switch agent {
	case "claude-code":
		if opts.Project == "" {
			opts.Project = importer.ClaudeProject(file, o.home)
		}
		return importer.ClaudeCode(data, opts)
	case "codex":
		return importer.Codex(data, filepath.Base(file), opts)
	case "gemini":
		return importer.Gemini(data)
	case "opencode":
		if opts.Project == "" {
			opts.Project = opencodeProject(file, o.home)
		}
		return importer.Opencode(data, opts)
	}
	return nil, fmt.Errorf("unknown agent %q: claude-code, codex, gemini or opencode", agent)
}

// opencodeProject is the project an opencode.json belongs to: the
// directory it is in, unless that is the user's global config
// (~/.config/opencode).
func opencodeProject(file, home string) string {
	abs, err := filepath.Abs(file)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(abs)
	if home != "" && (dir == filepath.Join(home, ".config", "opencode") || dir == filepath.Clean(home)) {
		return ""
	}
	return filepath.ToSlash(dir)
}

// currentPolicy is the part of GET /api/v1/permissions an import reads.
type currentPolicy struct {
	Tools    map[string]toolLevel `json:"tools"`
	Defaults map[string]string    `json:"defaults"`
	Rules    []currentRule        `json:"rules"`
}

// currentRule is a rule as the section holds it.
type currentRule struct {
	ID        string    `json:"id"`
	Tools     toolNames `json:"tools"`
	MatchType string    `json:"match_type"`
	Pattern   string    `json:"pattern"`
	Action    string    `json:"action"`
}

// toolNames is a rule's tools: a list or one name; items that are no
// string are left out.
type toolNames []string

func (t *toolNames) UnmarshalJSON(b []byte) error {
	*t = nil
	var one string
	if json.Unmarshal(b, &one) == nil {
		*t = toolNames{one}
		return nil
	}
	var list []json.RawMessage
	if json.Unmarshal(b, &list) != nil {
		return nil
	}
	for _, raw := range list {
		if json.Unmarshal(raw, &one) == nil {
			*t = append(*t, one)
		}
	}
	return nil
}

// toolLevel is a tool's level as the section holds it: a level, or a
// mapping's "*"; anything else is "".
type toolLevel string

func (l *toolLevel) UnmarshalJSON(b []byte) error {
	var level string
	if json.Unmarshal(b, &level) != nil {
		var m struct {
			All string `json:"*"`
		}
		_ = json.Unmarshal(b, &m)
		level = m.All
	}
	*l = toolLevel(level)
	return nil
}

// settingsPatch is the body of PATCH /api/v1/permissions/settings an
// import sends.
type settingsPatch struct {
	Defaults map[string]string `json:"defaults"`
}

// rule is the rule in the importer's shape, for comparing.
func (c currentRule) rule() importer.Rule {
	return importer.Rule{ID: c.ID, Tools: c.Tools, MatchType: c.MatchType, Pattern: c.Pattern, Action: c.Action}
}

// writeImport adds to the server's policy what the import converted and
// the policy does not have yet: a tool level that differs, defaults that
// differ, a rule no rule already decides alike (same tools, match type,
// pattern and action). Each write carries the ETag of the one before, so
// a concurrent edit stops the import (412) instead of being overwritten;
// run again, and only what is still missing is written.
func writeImport(c conn, res *importer.Result, stderr io.Writer) int {
	token, err := c.resolve()
	if err != nil {
		return failed(stderr, "toolgate", err)
	}
	data, etag, err := send(c, token, http.MethodGet, "/api/v1/permissions", nil, "")
	if err != nil {
		return printError(stderr, err)
	}
	var cur currentPolicy
	if err := json.Unmarshal(data, &cur); err != nil {
		return failed(stderr, "toolgate: the server's answer is not a permissions section", err)
	}
	have := make([]importer.Rule, 0, len(cur.Rules))
	ids := map[string]bool{}
	for _, r := range cur.Rules {
		have = append(have, r.rule())
		ids[r.ID] = true
	}
	var written, kept int
	put := func(method, path string, body any) error {
		b, _ := json.Marshal(body)
		_, next, err := send(c, token, method, path, b, etag)
		if err == nil {
			etag = next
			written++
		}
		return err
	}
	tools := sortedTools(res.Tools)
	for _, t := range tools {
		if string(cur.Tools[t]) == res.Tools[t] {
			kept++
			continue
		}
		if err := put(http.MethodPut, "/api/v1/permissions/tools/"+url.PathEscape(t), map[string]string{"level": res.Tools[t]}); err != nil {
			return writeFailed(stderr, written, err)
		}
	}
	if res.Defaults != "" {
		if cur.Defaults["*"] == res.Defaults {
			kept++
		} else if err := put(http.MethodPatch, "/api/v1/permissions/settings", settingsPatch{Defaults: map[string]string{"*": res.Defaults}}); err != nil {
			return writeFailed(stderr, written, err)
		}
	}
	for _, r := range res.Rules {
		if hasRule(have, r) {
			kept++
			continue
		}
		r.ID = freeID(ids, r.ID)
		if err := put(http.MethodPost, "/api/v1/permissions/rules", r); err != nil {
			return writeFailed(stderr, written, err)
		}
		have = append(have, r)
	}
	fmt.Fprintf(stderr, "toolgate import: wrote %d changes; already in the policy: %d\n", written, kept)
	return exitOK
}

// writeFailed reports a write the server refused, and how many came
// before it.
func writeFailed(stderr io.Writer, written int, err error) int {
	fmt.Fprintf(stderr, "toolgate import: stopped after %d changes: ", written)
	var se *statusError
	if errors.As(err, &se) && se.status == http.StatusPreconditionFailed {
		fmt.Fprintln(stderr, "the policy changed meanwhile; run the import again (what is written stays)")
		return exitError
	}
	return printError(stderr, err)
}

func sortedTools(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// hasRule reports whether the policy has a rule that decides like r.
func hasRule(rules []importer.Rule, r importer.Rule) bool {
	for _, x := range rules {
		if x.Same(r) {
			return true
		}
	}
	return false
}

// freeID is id, or id-2, id-3 ... when the policy has a rule by that id
// that decides otherwise; the id is then taken.
func freeID(ids map[string]bool, id string) string {
	out := id
	for n := 2; ids[out]; n++ {
		out = fmt.Sprintf("%s-%d", id, n)
	}
	ids[out] = true
	return out
}

// send is one exchange with the server with any method, If-Match when
// etag is set; it returns the body and the answer's ETag.
func send(c conn, token, method, path string, body []byte, etag string) ([]byte, string, error) {
	return exchange(context.Background(), c, token, method, path, body, etag, requestTimeout)
}
