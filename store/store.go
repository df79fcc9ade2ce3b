package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/internal/callbacks"
	"github.com/toolgate/toolgate/policy"
	"github.com/toolgate/toolgate/store/yamlsplit"
)

// BuiltinSourcePackage is BuiltinRules' source when no user builtin_rules.yaml
// is in force.
const BuiltinSourcePackage = "package"

// Options configure a Store.
type Options struct {
	// Workspace is the server's --workspace (also the base of a relative
	// /add-dir path).
	Workspace string
	// HomeDir expands ~; empty means the current user's home.
	HomeDir string
	// Logger gets reload and watcher messages; nil means slog.Default().
	Logger *slog.Logger
	// PackageRules is the text of the package default builtin_rules.yaml,
	// in force when the config dir has none (nil: no built-in rules). The
	// engine owns it (engine/builtin); package inforce gives it.
	PackageRules []byte
	// Compile compiles a permissions section with the built-in rules in
	// force: what it makes of them (the engine, which storage does not
	// import) and their validation problems. The store keeps the compiled
	// value in the same snapshot as the document it came from (Compiled)
	// and refuses an edit that adds problems. Nil compiles nothing: the
	// store then checks only that the document parses.
	Compile CompileFunc
}

// CompileFunc is Options.Compile: it is given the section and the
// built-in rules in force, typed (policy.DecodePolicy).
type CompileFunc func(section *policy.Section, builtin *policy.Builtin) (compiled any, problems []policy.Problem)

// Store is the policy document of a Backend and what Options.Compile made
// of it. Readers (Compiled, Problems, Section, BuiltinRules) never block; writes
// are serialized in the process by a mutex and across processes by the
// backend's lock (a file lock, a row lock).
type Store struct {
	*core
	// ifMatch is the ETag the section must have, as an edit reads it under
	// the backend's lock ("" for none): set on the views IfMatch makes.
	ifMatch string
}

// core is the state every view of a Store shares.
type core struct {
	backend Backend
	opts    Options
	log     *slog.Logger

	cur atomic.Pointer[state]
	// lastSetAside is whether the state in force set config.yaml aside,
	// so that its recovery is logged once.
	lastSetAside atomic.Bool
	// unavailable is the last backend error that wrapped ErrUnavailable,
	// nil once the backend answered again (Health).
	unavailable atomic.Pointer[error]

	mu   sync.Mutex // serializes writes and reloads in this process
	subs callbacks.List
	// kick asks the reload goroutine for a Reload (the backend's Watch).
	kick      chan struct{}
	stopWatch context.CancelFunc
	// closeBackend closes a backend the Store opened itself (Open).
	closeBackend func() error
	closeOnce    sync.Once
	wg           sync.WaitGroup
}

// state is one immutable snapshot of the loaded policy.
type state struct {
	// compiled is what Options.Compile made of section and builtin (nil
	// without one); compiledProblems are its problems alone, which an edit
	// must not add to.
	compiled         any
	compiledProblems []policy.Problem
	problems         []policy.Problem
	// section is the last good decoded permissions mapping (nil if absent).
	section map[string]any
	etag    string
	// builtin is the last good built-in rule list and where it came from.
	builtin       []any
	builtinSource string
	// cfgRaw and builtinRaw are the bytes last read, good or not, so that a
	// reload of an unchanged document is a no-op. builtinRaw is nil for the
	// package default.
	cfgRaw, builtinRaw []byte
	cfgOK              bool
	// setAside is true when config.yaml was set aside whole (it does not
	// parse, is empty or missing) and the last good policy is in force.
	setAside bool
}

// Open loads the config dir, creating it and a default config.yaml when
// missing, compiles it (Options.Compile) and starts watching the dir for changes.
// A config.yaml that does not parse is reported by Problems and leaves a
// policy that asks for everything; it is not an error.
func Open(dir string, opts Options) (*Store, error) {
	fb, err := NewFileBackend(dir, opts.Logger)
	if err != nil {
		return nil, err
	}
	s, err := OpenBackend(context.Background(), fb, opts)
	if err != nil {
		return nil, err
	}
	s.closeBackend = fb.Close
	return s, nil
}

// OpenBackend loads the policy document of b, compiles it and
// starts watching b for changes made elsewhere. A document that does not
// parse is reported by Problems, as with Open. When b cannot be reached at
// all the error (wrapping ErrUnavailable for a database) is returned: there
// is no policy to start with. The caller keeps owning b; Close stops the
// watch but does not close b.
func OpenBackend(ctx context.Context, b Backend, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HomeDir == "" {
		if h, err := os.UserHomeDir(); err == nil {
			opts.HomeDir = h
		}
	}
	if _, err := decodePackageRules(opts.PackageRules); err != nil {
		return nil, err
	}
	s := &Store{core: &core{backend: b, opts: opts, log: opts.Logger, kick: make(chan struct{}, 1)}}
	doc, err := b.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: read the policy from %s: %w", b.Name(), err)
	}
	st, _ := s.load(nil, doc)
	s.cur.Store(st)
	s.lastSetAside.Store(st.setAside)
	s.logProblems(st)
	if err := s.startWatch(); err != nil {
		return nil, err
	}
	return s, nil
}

// Close stops the watch (and closes the backend when Open made it).
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.stopWatch()
		s.wg.Wait()
		if s.closeBackend != nil {
			err = s.closeBackend()
		}
	})
	return err
}

// IfMatch returns a view of the store whose edits succeed only when the
// section, as read under the backend's lock right before the edit, has
// the ETag tag (quoted or not); otherwise they fail with
// ErrPreconditionFailed and change nothing. Checking the ETag in memory
// and then editing is not enough with several replicas: another one may
// have written in between. An empty tag or "*" returns s itself.
func (s *Store) IfMatch(tag string) *Store {
	tag = CleanETag(tag)
	if tag == "" || tag == "*" {
		return s
	}
	return &Store{core: s.core, ifMatch: tag}
}

// Dir is the absolute config dir of a file backend, else "".
func (s *Store) Dir() string {
	if fb, ok := s.backend.(*FileBackend); ok {
		return fb.Dir()
	}
	return ""
}

// Backend is where the policy document lives.
func (s *Store) Backend() Backend { return s.backend }

// Compiled is what Options.Compile made of the policy in force (nil
// without one), from the same snapshot as Section and Problems. It never
// blocks and does not allocate.
func (s *Store) Compiled() any { return s.cur.Load().compiled }

// Problems are the validation problems of the policy now in force, plus a
// parse error of config.yaml or builtin_rules.yaml if either does not parse
// (then the last good content of that file stays in force), plus
// MsgBackendUnreachable while the backend cannot be reached.
func (s *Store) Problems() []policy.Problem {
	out := append([]policy.Problem(nil), s.cur.Load().problems...)
	if s.Health() != nil {
		// The cause names the database's user, host and port, which are
		// the operator's and /readyz is unauthenticated: the log has it
		// (noteBackend), the problem says what it means.
		out = append(out, policy.Problem{Path: s.backend.Name(), Message: MsgBackendUnreachable})
	}
	return out
}

// MsgBackendUnreachable is the problem a policy backend that cannot be
// reached adds to Problems.
const MsgBackendUnreachable = "the policy store cannot be reached (the server log says why); the last good policy stays in force"

// Section returns the decoded permissions section in force (nil when the
// file has none) and its ETag. The map is a copy the caller may change.
func (s *Store) Section() (map[string]any, string, error) {
	st := s.cur.Load()
	if st.section == nil {
		return nil, st.etag, nil
	}
	// normalize copies every map and list: the state is already normalized,
	// so this is the deep copy that keeps callers from changing it.
	return normalize(st.section).(map[string]any), st.etag, nil
}

// Written returns the section in force as written (a copy the caller may
// keep) and its ETag.
func (s *Store) Written() (policy.Written, string, error) {
	sec, etag, err := s.Section()
	return policy.WrittenOf(sec), etag, err
}

// ETag is the ETag of the section in force (Section's, without a copy).
func (s *Store) ETag() string { return s.cur.Load().etag }

// BuiltinRules returns the built-in rule list in force and its source:
// "package" for the embedded default, else the user file's path.
func (s *Store) BuiltinRules() ([]any, string) {
	st := s.cur.Load()
	return normalize(st.builtin).([]any), st.builtinSource // a deep copy, as in Section
}

// OnChange registers fn to be called after every reload or write that
// changed the policy. fn runs on the goroutine that made the change, after
// the new snapshot is in force; it must not block for long.
func (s *Store) OnChange(fn func()) { s.subs.Add(fn) }

func (s *Store) notify() { s.subs.Call() }

// Reload re-reads the document and swaps in a new snapshot (compiled
// once) if it changed.
// A file that does not parse keeps its last good content in force and is
// reported by Problems; that is not an error of Reload. A backend that
// cannot be reached is (the policy in force stays, and Health says why).
func (s *Store) Reload() error {
	s.mu.Lock()
	doc, err := s.backend.Read(context.Background())
	if s.noteBackend(err); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("store: reload from %s: %w", s.backend.Name(), err)
	}
	st, changed := s.load(s.cur.Load(), doc)
	if changed {
		s.cur.Store(st)
	}
	s.mu.Unlock()
	if changed {
		if prev := s.lastSetAside.Swap(st.setAside); prev && !st.setAside {
			s.log.Info("config.yaml reads again; its policy is in force", "backend", s.backend.Name(), "dir", s.Dir())
		}
		s.logProblems(st)
		s.notify()
	}
	return nil
}

func (s *Store) logProblems(st *state) {
	for _, p := range st.problems {
		s.log.Warn("policy problem", "backend", s.backend.Name(), "dir", s.Dir(), "path", p.Path, "problem", p.Message)
	}
}

// load builds a new state from a document read. prev (nil at Open)
// supplies the last good content of a file that does not parse. changed is
// false when both texts are the bytes prev was built from.
func (s *Store) load(prev *state, doc Document) (*state, bool) {
	cfgRaw, cfgErr := doc.Config, doc.ConfigErr
	builtinRaw, builtinErr := doc.Builtin, doc.BuiltinErr
	if prev != nil && (cfgErr == nil) == prev.cfgOK && bytes.Equal(cfgRaw, prev.cfgRaw) &&
		builtinErr == nil && (builtinRaw == nil) == (prev.builtinRaw == nil) && bytes.Equal(builtinRaw, prev.builtinRaw) {
		return prev, false
	}
	st := &state{cfgRaw: cfgRaw, builtinRaw: builtinRaw, cfgOK: cfgErr == nil}
	var fileProblems []policy.Problem

	st.builtin, st.builtinSource = []any{}, BuiltinSourcePackage
	if prev != nil {
		st.builtin, st.builtinSource = prev.builtin, prev.builtinSource
	}
	// builtinKept: the rules in force are prev's (set aside, or the same text).
	builtinKept := prev != nil && builtinErr == nil && (builtinRaw == nil) == (prev.builtinRaw == nil) && bytes.Equal(builtinRaw, prev.builtinRaw)
	switch rules, src, p := s.decodeBuiltin(builtinRaw, builtinErr); {
	case p != nil:
		builtinKept = prev != nil
		fileProblems = append(fileProblems, *p)
		if prev == nil {
			st.builtin, st.builtinSource = s.packageRules(), BuiltinSourcePackage
		}
	default:
		st.builtin, st.builtinSource = rules, src
	}

	var section map[string]any
	var sectionProblems []policy.Problem
	switch {
	case cfgErr != nil:
		fileProblems = append(fileProblems, policy.Problem{Path: ConfigFile, Message: readErrMessage(cfgErr)})
		section, sectionProblems = keepSection(prev)
		st.setAside = true
	case len(bytes.TrimSpace(cfgRaw)) == 0:
		// An emptied file is far more often a save in progress or a slip
		// than a wish to drop every rule: keep the last good policy.
		fileProblems = append(fileProblems, policy.Problem{Path: ConfigFile,
			Message: "file is empty; " + MsgSetAside})
		section, sectionProblems = keepSection(prev)
		st.setAside = true
	default:
		sec, ps, perr := decodeSection(cfgRaw)
		if perr != nil {
			fileProblems = append(fileProblems, policy.Problem{Path: ConfigFile, Message: setAsideMessage(perr, cfgRaw)})
			section, sectionProblems = keepSection(prev)
			st.setAside = true
		} else {
			section, sectionProblems = sec, ps
		}
	}
	st.section = section
	// The ETag's encoding only reads the section, as compiling does: the
	// two run side by side (start time).
	etag := make(chan string, 1)
	go func() { etag <- sectionETag(section) }()
	if sectionKept := st.setAside && prev != nil; sectionKept && builtinKept {
		// Nothing the compile reads changed: a file set aside compiles nothing.
		st.compiled, st.compiledProblems = prev.compiled, prev.compiledProblems
	} else {
		st.compiled, st.compiledProblems = s.compile(section, st.builtin)
	}
	st.etag = <-etag
	st.problems = append(append(fileProblems, sectionProblems...), st.compiledProblems...)
	return st, true
}

// MsgSetAside ends the problem of a config.yaml that was set aside whole
// (it does not parse, is empty or missing): the pages tell it from entries
// that are only inert.
const MsgSetAside = "the whole file is set aside and the last good policy stays in force"

// setAsideMessage is the problem of a config.yaml that does not parse:
// the parser's error, the line it names as written (the parser's line is
// the best guess: an indentation slip is often reported a line late, so
// the line before is shown too) and what happens meanwhile.
func setAsideMessage(err error, raw []byte) string {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		lines := strings.Split(string(raw), "\n")
		for _, i := range []int{n - 1, n} {
			if i >= 1 && i <= len(lines) {
				msg += fmt.Sprintf("; line %d: %q", i, strings.TrimRight(lines[i-1], "\r"))
			}
		}
	}
	return msg + "; " + MsgSetAside
}

// yamlLine finds the line number in a YAML parser error.
var yamlLine = regexp.MustCompile(`line (\d+)`)

func readErrMessage(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "file is missing; " + MsgSetAside
	}
	return err.Error()
}

// keepSection returns the last good section (nil at start, which asks for
// everything) and the store's own problems about it.
func keepSection(prev *state) (map[string]any, []policy.Problem) {
	if prev == nil {
		return nil, nil
	}
	var ps []policy.Problem
	for _, p := range prev.problems {
		if p.Path == "permissions" {
			ps = append(ps, p)
		}
	}
	return prev.section, ps
}

// decodeSection parses config.yaml text and returns its permissions
// mapping. A non-mapping permissions value is a problem and counts as absent.
func decodeSection(raw []byte) (map[string]any, []policy.Problem, error) {
	if m, ok := yamlsplit.Decode(raw, yamlsplit.Options{Finish: finishDecoded}); ok {
		return m, nil, nil
	}
	doc, err := parseConfig(raw)
	if err != nil {
		return nil, nil, err
	}
	v, err := doc.decodedPermissions()
	if err != nil {
		return nil, nil, err
	}
	switch t := v.(type) {
	case nil:
		return nil, nil, nil
	case map[string]any:
		return t, nil, nil
	}
	return nil, []policy.Problem{{Path: "permissions", Message: fmt.Sprintf("must be a mapping, not %s", kindName(v))}}, nil
}

// finishDecoded is what the store makes of a value yaml.v3 decoded:
// normalized, then compacted.
func finishDecoded(v any) any { return compactSection(normalize(v)) }

// decodeBuiltin decodes builtin_rules.yaml (raw nil: the package default).
func (s *Store) decodeBuiltin(raw []byte, readErr error) ([]any, string, *policy.Problem) {
	if readErr != nil {
		return nil, "", &policy.Problem{Path: BuiltinFile, Message: readErr.Error()}
	}
	if raw == nil {
		return s.packageRules(), BuiltinSourcePackage, nil
	}
	rules, err := decodeRuleList(raw)
	if err != nil {
		return nil, "", &policy.Problem{Path: BuiltinFile, Message: err.Error()}
	}
	return rules, s.builtinSource(), nil
}

// builtinSource names the user's built-in rules: the file's path for the
// file backend, else the backend's name and the file name.
func (s *Store) builtinSource() string {
	if b, ok := s.backend.(interface{ BuiltinSource() string }); ok {
		return b.BuiltinSource()
	}
	return s.backend.Name() + ":" + BuiltinFile
}

// decodeRuleList decodes a file with a top-level `rules:` list; an empty
// file or one without the key is an empty list (a hand-edited file).
func decodeRuleList(raw []byte) ([]any, error) {
	rules, _, err := DecodeRuleList(raw)
	return rules, err
}

// DecodeRuleList reads a builtin_rules.yaml text: a mapping whose `rules`
// is a list (JSON is YAML too). listed says whether the text holds a
// `rules` list at all, for callers that refuse a text without one (the
// REST route, where "no list" is more likely a mistake than a wish).
func DecodeRuleList(raw []byte) (rules []any, listed bool, err error) {
	var top any
	if err := yaml.Unmarshal(raw, &top); err != nil {
		return nil, false, err
	}
	top = normalize(top)
	if top == nil {
		return []any{}, false, nil
	}
	m, ok := top.(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("the top level must be a mapping with a rules list, not %s", kindName(top))
	}
	switch r := m["rules"].(type) {
	case nil:
		return []any{}, false, nil
	case []any:
		return r, true, nil
	default:
		return nil, false, fmt.Errorf("rules must be a list, not %s", kindName(r))
	}
}

// compile decodes the section and the built-in rules and runs
// Options.Compile on them, when there is one.
func (s *Store) compile(section map[string]any, builtin []any) (any, []policy.Problem) {
	if s.opts.Compile == nil {
		return nil, nil
	}
	sec, b := policy.DecodePolicy(section, builtin)
	return s.opts.Compile(&sec, &b)
}

// sectionETag is the hash of the section's canonical JSON (map keys sorted).
func sectionETag(section map[string]any) string {
	b, err := json.Marshal(section)
	if err != nil {
		b = []byte(fmt.Sprintf("%#v", section))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

func kindName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, uint64, float64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
