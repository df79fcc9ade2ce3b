// Package redact removes secrets from tool arguments and text before they
// are logged, stored or shown: the decision log, the approval history,
// approval webhooks and the pages all go through it. It is not storage:
// a summary reads a call as the engine does (a shell tool's command, a path
// tool's paths), and storage keeps what it returns.
package redact

import (
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/policy"
)

// Redacted replaces a secret in the decision log.
const Redacted = "[REDACTED]"

// secretValue is a shell word: a quoted string or a run up to whitespace or
// an operator.
const secretValue = `("[^"]*"|'[^']*'|[^\s'";&|]+)`

// secretName matches names that hold secrets: tokens, passwords, keys.
const secretName = `(?:secret|token|passw(?:or)?d|passwd|pwd|api[-_]?key|access[-_]?key|private[-_]?key|credentials?|auth)`

// redactRule is one pattern and its replacement, which keeps the name of the
// secret and masks its value.
type redactRule struct {
	re   *regexp.Regexp
	repl string
}

// redactRules run in order: whole blocks first, then well-known key formats,
// then name=value forms. Each masks only the value, so the log still shows
// which secret was passed.
var redactRules = []redactRule{
	// PEM private key blocks, terminated or cut off.
	{regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`), `-----BEGIN ${1}PRIVATE KEY-----` + Redacted + `-----END ${1}PRIVATE KEY-----`},
	// Well-known token formats: GitHub, OpenAI/Anthropic/Stripe style sk-,
	// Slack, AWS access key ids, Google API keys, JWTs.
	{regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|sk-[A-Za-z0-9_\-]{12,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{12,}|xox[abposr]-[A-Za-z0-9\-]{8,}|AKIA[0-9A-Z]{16}|AIza[0-9A-Za-z_\-]{30,}|eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,})`), Redacted},
	// Secret-bearing headers: Authorization: Bearer x (Basic, token, Digest),
	// X-Api-Key: x, X-Auth-Token: x.
	{regexp.MustCompile(`(?i)(\b[\w-]*` + secretName + `[\w-]*\s*:\s*(?:(?:bearer|basic|token|digest)\s+)?)([^\s'";&|]+)`), `${1}` + Redacted},
	// mysql -pSECRET (the password glued to -p) for the MySQL family.
	{regexp.MustCompile(`(\b(?:mysql\w*|mariadb\w*)\b[^;&|\n]*?\s-p)([^\s;&|]+)`), `${1}` + Redacted},
	// Command-line flags: --password=x, --password x, --token x, -password x.
	{regexp.MustCompile(`(?i)((?:^|\s)--?[\w-]*` + secretName + `[\w-]*(?:=|\s+))` + secretValue), `${1}` + Redacted},
	// Assignments and query parameters: AWS_SECRET_ACCESS_KEY=x, token=x in
	// a URL, password: in JSON-ish text.
	{regexp.MustCompile(`(?i)(\b[\w.-]*` + secretName + `[\w.-]*=)` + secretValue), `${1}` + Redacted},
	// JSON members: "password": "x", "api_key": "x" inside a request body
	// (curl -d '{...}'), a quoted string or a bare value.
	{regexp.MustCompile(`(?i)("[\w.-]*` + secretName + `[\w.-]*"\s*:\s*)("(?:[^"\\]|\\.)*"|[^\s,}\]]+)`), `${1}"` + Redacted + `"`},
	// sshpass -p SECRET (or -pSECRET): the password on the command line.
	{regexp.MustCompile(`(\bsshpass\b(?:\s+-[^p\s]\S*)*\s+-p\s*)([^\s;&|]+)`), `${1}` + Redacted},
	// Passwords in URLs: scheme://user:secret@host.
	{regexp.MustCompile(`(\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s:/@]+:)([^\s@/]+)(@)`), `${1}` + Redacted + `${3}`},
}

// Redact masks the secrets in a command line or any other text: private key
// blocks, well-known token formats (ghp_, sk-, AKIA, ...), authorization
// headers, mysql -p passwords, --password style flags, NAME=value
// assignments whose name says secret/token/password/key, and URL passwords.
// It is pure and safe for concurrent use.
//
// Text longer than MaxText is cut to MaxText first, saying how much was
// left out: what Text returns is for people and logs, and the rules' cost
// grows with the text (a 900 kB argument took over a second).
func Text(s string) string {
	if len(s) > MaxText {
		cut := truncate(s, MaxText)
		head := cut[:strings.LastIndex(cut, "… [")]
		return redactText(head) + cut[len(head):]
	}
	return redactText(s)
}

// redactText is Text without the length cut.
func redactText(s string) string {
	if s == "" {
		return s
	}
	hint, longRun := scanSecret(s)
	if hint {
		return applyRedactRules(s)
	}
	if longRun {
		return maskRandomRuns(s)
	}
	return s
}

// MaxText is the longest text Text keeps, in bytes.
const MaxText = 32 << 10

// applyRedactRules runs every redaction rule on s, then masks random runs.
func applyRedactRules(s string) string {
	for _, r := range redactRules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return maskRandomRuns(s)
}

// maskRandomRuns masks the long runs of token characters that look random.
// It finds the runs of randomRun by hand, in one pass: the regexp's 40
// repeated classes cost about a microsecond a byte on a long run.
func maskRandomRuns(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !tokenByte(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && tokenByte(s[j]) {
			j++
		}
		end := j
		for k := 0; k < 2 && end < len(s) && s[end] == '='; k++ {
			end++
		}
		if j-i >= 40 && looksRandom(s[i:end]) {
			if b.Len() == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:i])
			b.WriteString(Redacted)
			last = end
		}
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// tokenByte is a character of randomRun's class.
func tokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+'
}

// secretHints are lower-case strings at least one of which every redaction
// rule needs to find: the secret names, key prefixes, PEM headers, mysql and
// URLs with credentials. A text with none of them, and no long run of token
// characters, skips the regexes: most commands hold no secret.
var secretHints = []string{"secret", "token", "passw", "pwd", "key", "credential", "auth",
	"begin", "gh", "sk", "rk_", "pk_", "xox", "akia", "aiza", "eyj", "mysql", "mariadb", "://", "sshpass"}

// hintsByFirst lists the secretHints by their first byte, in either case,
// so that mayHoldSecret tries at each position only the hints that can
// start there.
var hintsByFirst = func() (t [256][]string) {
	for _, h := range secretHints {
		t[h[0]] = append(t[h[0]], h)
		if c := h[0]; c >= 'a' && c <= 'z' {
			t[c-'a'+'A'] = append(t[c-'a'+'A'], h)
		}
	}
	return t
}()

// mayHoldSecret reports whether any redaction rule could match s: s holds
// a hint (ignoring ASCII case), a long run of token characters or any
// non-ASCII byte. It is one pass over s.
func mayHoldSecret(s string) bool {
	hint, run := scanSecret(s)
	return hint || run
}

// scanSecret reports, in one pass, whether s holds a hint of a named
// secret (or non-ASCII text, which the rules' case folding reaches), and
// whether it holds a run of 40 token characters, which only the
// random-run rule looks at.
func scanSecret(s string) (hint, longRun bool) {
	run := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			// (?i) in the rules folds beyond ASCII: the Kelvin sign matches
			// k and ſ matches s. Non-ASCII text takes the full path.
			return true, true
		}
		if !hint {
			for _, h := range hintsByFirst[c] {
				if hasPrefixFold(s[i:], h) {
					hint = true
					break
				}
			}
		}
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' {
			if run++; run >= 40 {
				longRun = true
			}
		} else {
			run = 0
		}
		if hint && longRun {
			return true, true
		}
	}
	return hint, longRun
}

// hasPrefixFold reports whether s starts with the lower-case ASCII
// prefix, ignoring ASCII case.
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for j := 0; j < len(prefix); j++ {
		c := s[j]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[j] {
			return false
		}
	}
	return true
}

// looksRandom reports whether a run is hex of 48 digits or more (longer
// than a git SHA-1), or mixes upper case, lower case and digits.
func looksRandom(run string) bool {
	var upper, lower, digit, nonHex bool
	for i := 0; i < len(run); i++ {
		c := run[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
			if c >= 'a' {
				lower = true
			} else {
				upper = true
			}
		case c >= 'a' && c <= 'z':
			lower, nonHex = true, true
		case c >= 'A' && c <= 'Z':
			upper, nonHex = true, true
		default:
			nonHex = true
		}
	}
	if !nonHex && digit && len(run) >= 48 {
		return true
	}
	return upper && lower && digit
}

// secretKey matches argument names whose whole value is a secret.
var secretKey = regexp.MustCompile(`(?i)` + secretName)

// Args returns a deep copy of tool arguments with secrets masked: the
// value of a key that names a secret (password, token, api_key, ...) is
// replaced whole, and so is every string or number inside a list or
// object under such a key (an MCP tool's {"auth": {"pin": 1234}});
// every other string goes through Redact.
func Args(args map[string]any) map[string]any {
	if args == nil {
		return nil
	}
	out := make(map[string]any, len(args))
	for k, v := range args {
		if secretKey.MatchString(k) {
			if s, ok := v.(string); !ok || s != "" {
				out[k] = maskAll(v)
				continue
			}
		}
		out[k] = redactValue(v)
	}
	return out
}

// maskAll replaces every string and number of v with Redacted, keeping
// the shape of lists and objects (their keys), booleans and nulls, which
// hold no secret.
func maskAll(v any) any {
	switch t := v.(type) {
	case nil, bool:
		return t
	case map[string]any:
		return copyObject(t, nil, maskAll)
	case map[any]any:
		return copyObject(stringKeyed(t), nil, maskAll)
	case []any:
		return copyList(t, maskAll)
	}
	return Redacted
}

func redactValue(v any) any {
	switch t := v.(type) {
	case string:
		return Text(t)
	case map[string]any:
		return Args(t)
	case map[any]any:
		return Args(stringKeyed(t))
	case []any:
		return copyList(t, redactValue)
	}
	return v
}

// SummaryMax is the longest argument summary kept in the decision log, in
// bytes.
const SummaryMax = 300

// Summarize is the redacted one-line summary of a call's arguments that the
// decision log keeps: the command of a shell tool, the path values of a
// path tool, else (an MCP tool's among them) the arguments as canonical
// JSON (keys sorted, as args rules match them), each string cut to
// summaryValueMax so that one long value does not hide the others.
func Summarize(call engine.Call) string {
	tool, args := call.Tool(), call.Args()
	var s string
	switch engine.ToolCategory(tool) {
	case engine.CategoryShell:
		s = Text(call.Command())
	case engine.CategoryPath:
		if !engine.IsMCPTool(tool) {
			s = pathSummary(args)
		}
	}
	if s == "" && len(args) > 0 {
		if j, err := engine.CanonicalArgs(ClipArgs(Args(args), summaryValueMax)); err == nil {
			s = j
		} else if b, err := json.Marshal(Args(args)); err == nil {
			s = string(b)
		}
	}
	return truncate(Visible(strings.ReplaceAll(s, "\n", `\n`)), SummaryMax)
}

// summaryValueMax is the longest string value a JSON summary keeps.
const summaryValueMax = 120

// pathSummary lists the string arguments of a path tool as key=value, keys
// sorted, redacted.
func pathSummary(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k, v := range args {
		if _, ok := v.(string); ok {
			keys = append(keys, k)
		}
	}
	// Path keys first, so that a long content argument cannot push the
	// path out of the summary.
	sort.Slice(keys, func(i, j int) bool {
		pi, pj := policy.IsPathKey(keys[i]), policy.IsPathKey(keys[j])
		if pi != pj {
			return pi
		}
		return keys[i] < keys[j]
	})
	red := Args(args)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+red[k].(string))
	}
	return strings.Join(parts, " ")
}

// truncate cuts s to about n bytes on a rune boundary and says how much
// was cut, so that a cut command never looks complete.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… [" + strconv.Itoa(len(s)-cut) + " more bytes not shown]"
}
