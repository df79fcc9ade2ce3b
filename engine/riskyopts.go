package engine

import (
	"slices"
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
)

// RiskyUse names an option (or environment assignment) of a command that
// makes it write files or run programs, with a reason a person can read.
type RiskyUse struct {
	Program string // the program's base name ("" for an assignment before it)
	Option  string // the word as written, up to any =
	Reason  string
}

// RiskyOption reports whether one simple command, as its expanded words
// (program first; leading NAME=value assignments allowed), uses an option
// that writes files or runs programs: `git log --output=f`, `find -delete`,
// `sort -o f`, `sed -i`, `less -o f`, `tar --to-command=...`. Such options
// turn a command an allow rule treats as read-only (`git log *`, `sort *`)
// into one that is not. Abbreviated long options, which
// GNU getopt and git accept, count as the option they abbreviate.
func RiskyOption(argv []string) (RiskyUse, bool) {
	for len(argv) > 0 {
		name, _, isAssign := strings.Cut(argv[0], "=")
		if !isAssign || !shell.IsEnvName(name) || name == "" {
			break
		}
		if why, bad := riskyEnv(name); bad {
			return RiskyUse{Option: name, Reason: why}, true
		}
		argv = argv[1:]
	}
	if len(argv) == 0 {
		return RiskyUse{}, false
	}
	prog := baseName(argv[0])
	if prog == "env" {
		return riskyEnvCommand(argv[1:])
	}
	check, ok := riskyTables[prog]
	if !ok {
		return RiskyUse{}, false
	}
	opt, why, bad := check(argv[1:])
	if !bad {
		return RiskyUse{}, false
	}
	return RiskyUse{Program: prog, Option: opt, Reason: why}, true
}

// baseName is the last /-separated part of a program word, without .exe.
func baseName(w string) string {
	if i := strings.LastIndexAny(w, `/\`); i >= 0 {
		w = w[i+1:]
	}
	if len(w) > 4 && strings.EqualFold(w[len(w)-4:], ".exe") {
		w = w[:len(w)-4]
	}
	return w
}

// riskyEnvNames are environment variables that make an ordinary command run
// another program, load code or read a configuration that can name one.
var riskyEnvNames = reasonsByName(map[string][]string{
	"changes which programs run":                                  {"PATH"},
	"changes the configuration files read (such as ~/.gitconfig)": {"HOME"},
	"changes the configuration files read":                        {"XDG_CONFIG_HOME"},
	"names a program to run": {
		"PAGER", "MANPAGER", "GIT_PAGER", "SYSTEMD_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
		"GIT_SEQUENCE_EDITOR", "GIT_EXTERNAL_DIFF", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS",
		"SSH_ASKPASS", "GIT_PROXY_COMMAND", "LESSCLOSE", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "BROWSER",
	},
	"changes which programs git runs":                  {"GIT_EXEC_PATH"},
	"points git at another repository's configuration": {"GIT_DIR"},
	"installs hooks from another directory":            {"GIT_TEMPLATE_DIR"},
	"sets git configuration":                           {"GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"},
	"names an input preprocessor to run":               {"LESSOPEN"},
	"names an editor to run":                           {"LESSEDIT"},
	"reads key bindings that can set LESSOPEN":         {"LESSKEY", "LESSKEYIN"},
	"loads a library into the program":                 {"LD_PRELOAD", "LD_AUDIT", "DYLD_INSERT_LIBRARIES"},
	"changes the libraries loaded":                     {"LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH"},
	"runs a script at shell start":                     {"BASH_ENV", "ENV"},
	"runs a command":                                   {"PROMPT_COMMAND"},
	"adds interpreter options":                         {"PERL5OPT", "RUBYOPT"},
	"changes the modules loaded":                       {"PERL5LIB", "PYTHONPATH", "RUBYLIB"},
	"runs a script":                                    {"PYTHONSTARTUP"},
	"adds interpreter options (such as --require)":     {"NODE_OPTIONS"},
	"adds tar options (such as --to-command)":          {"TAR_OPTIONS"},
	"adds man options (such as --pager)":               {"MANOPT"},
	"can write a trace file":                           {"GIT_TRACE"},
})

// reasonsByName turns names grouped by reason into a reason per name.
func reasonsByName(byReason map[string][]string) map[string]string {
	out := map[string]string{}
	for why, names := range byReason {
		for _, n := range names {
			if _, twice := out[n]; twice {
				panic("riskyEnvNames lists " + n + " twice") // caught by any test
			}
			out[n] = why
		}
	}
	return out
}

// riskyEnv reports whether assigning name is risky for the command after it.
func riskyEnv(name string) (string, bool) {
	if why, ok := riskyEnvNames[name]; ok {
		return "the environment variable " + name + " " + why, true
	}
	if strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_") {
		return "the environment variable " + name + " sets git configuration", true
	}
	return "", false
}

// riskyEnvCommand checks `env [options] [NAME=value]... [command]`: its
// assignments, -S (a split string, read as more words) and the command.
func riskyEnvCommand(args []string) (RiskyUse, bool) {
	for len(args) > 0 {
		w := args[0]
		switch {
		case w == "--":
			return RiskyOption(args[1:])
		case w == "-u" || w == "-C" || w == "--unset" || w == "--chdir":
			args = args[min(2, len(args)):]
			continue
		case w == "-S" || w == "--split-string":
			if len(args) < 2 {
				return RiskyUse{}, false
			}
			return RiskyOption(append(strings.Fields(args[1]), args[2:]...))
		case strings.HasPrefix(w, "-S"):
			return RiskyOption(append(strings.Fields(w[2:]), args[1:]...))
		case strings.HasPrefix(w, "--split-string="):
			return RiskyOption(append(strings.Fields(w[len("--split-string="):]), args[1:]...))
		case strings.HasPrefix(w, "-") && w != "-":
			args = args[1:]
			continue
		}
		return RiskyOption(args)
	}
	return RiskyUse{}, false
}

// optTable describes one program's options: which short letters take a
// value (the rest of the bundle, or the next word), and which short
// letters, long names (without --) and single-dash words are risky.
type optTable struct {
	valueShort string
	short      map[byte]string
	long       map[string]string
	// single are risky words matched whole (find's -exec, xxd's -r).
	single map[string]string
	// safeLong are real long options that abbreviate a risky one
	// (git's --text and --textconv), so they are not taken for it.
	safeLong []string
	// longValue are long options that take the next word as their value
	// when written without =.
	longValue []string
	// noBundles: the program's options are single-dash words (find, xxd),
	// not bundles of letters.
	noBundles bool
}

// scan walks args and returns the first risky option, and the operands
// (words that are not options or option values) through operands.
func (t *optTable) scan(args []string, operands *[]string) (opt, why string, bad bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--":
			if operands != nil {
				*operands = append(*operands, args[i+1:]...)
			}
			return "", "", false
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(w[2:], "=")
			if why, ok := t.longRisk(name); ok {
				return "--" + name, why, true
			}
			if !strings.Contains(w, "=") && slices.Contains(t.longValue, name) {
				i++
			}
		case len(w) > 1 && w[0] == '-':
			if why, ok := t.single[w]; ok {
				return w, why, true
			}
			if name, _, hasEq := strings.Cut(w, "="); hasEq {
				if why, ok := t.single[name]; ok {
					return name, why, true
				}
			}
			if t.noBundles {
				continue
			}
			for j := 1; j < len(w); j++ {
				c := w[j]
				if why, ok := t.short[c]; ok {
					return w, why, true
				}
				if strings.IndexByte(t.valueShort, c) >= 0 {
					if j == len(w)-1 {
						i++ // the value is the next word
					}
					break
				}
			}
		default:
			if operands != nil {
				*operands = append(*operands, w)
			}
		}
	}
	return "", "", false
}

// longRisk matches a long option name, or an abbreviation of at least three
// characters that is not itself a real option, against the risky names.
func (t *optTable) longRisk(name string) (string, bool) {
	if why, ok := t.long[name]; ok {
		return why, true
	}
	if len(name) < 3 {
		return "", false
	}
	if slices.Contains(t.safeLong, name) {
		return "", false
	}
	for full, why := range t.long {
		if strings.HasPrefix(full, name) {
			return why, true
		}
	}
	return "", false
}

// riskyOperand scans args with t and returns the first risky option, or
// else the first operand w (the i-th) for which risky(i, w) holds, with why.
func (t *optTable) riskyOperand(args []string, why string, risky func(i int, w string) bool) (string, string, bool) {
	var operands []string
	if opt, reason, bad := t.scan(args, &operands); bad {
		return opt, reason, true
	}
	for i, w := range operands {
		if risky(i, w) {
			return w, why, true
		}
	}
	return "", "", false
}

// checker checks the arguments of one program (argv without the program).
type checker func(args []string) (opt, why string, bad bool)

// tableOnly makes a checker of a table alone.
func tableOnly(t *optTable) checker {
	return func(args []string) (string, string, bool) { return t.scan(args, nil) }
}

const (
	whyWrites    = "writes a file"
	whyRuns      = "runs a program"
	whyConfig    = "reads a configuration that can name a program to run"
	whyScript    = "runs a script file whose commands cannot be checked"
	whyInPlace   = "edits files in place"
	whyOutputArg = "writes its output to the file named"
)

var (
	sortTable = &optTable{valueShort: "kSotT", short: map[byte]string{'o': whyOutputArg},
		long: map[string]string{"output": whyOutputArg, "compress-program": whyRuns}}
	lessTable = &optTable{valueShort: "bhjkopxyzDOPtT#",
		short: map[byte]string{'o': "copies its input to a log file", 'O': "copies its input to a log file", 'k': whyConfig},
		long: map[string]string{"log-file": "copies its input to a log file", "LOG-FILE": "copies its input to a log file",
			"lesskey-file": whyConfig, "lesskey-src": whyConfig, "lesskey-content": whyConfig}}
	manTable = &optTable{valueShort: "CMPpLmSseRrEW",
		short: map[byte]string{'P': "names a pager program to run", 'H': "runs a web browser", 'C': whyConfig},
		long:  map[string]string{"pager": "names a pager program to run", "html": "runs a web browser", "config-file": whyConfig}}
	findTable = &optTable{noBundles: true, single: map[string]string{
		"-exec": whyRuns, "-execdir": whyRuns, "-ok": whyRuns, "-okdir": whyRuns, "-delete": "deletes the files found",
		"-fprint": whyWrites, "-fprint0": whyWrites, "-fprintf": whyWrites, "-fls": whyWrites}}
	fdTable = &optTable{valueShort: "edtEScjoxXi",
		short: map[byte]string{'x': "runs a program for each file found", 'X': "runs a program on the files found"},
		long:  map[string]string{"exec": "runs a program for each file found", "exec-batch": "runs a program on the files found"}}
	rgTable    = &optTable{valueShort: "ABCefgmMtTjrE", long: map[string]string{"pre": "runs a preprocessor program on every file"}}
	treeTable  = &optTable{valueShort: "LPIo", short: map[byte]string{'o': whyOutputArg}}
	rsyncTable = &optTable{valueShort: "eBfTM", short: map[byte]string{'e': "names the remote shell program to run"},
		long: map[string]string{"rsh": "names the remote shell program to run", "rsync-path": "names the program run on the other side"}}
	curlTable = &optTable{valueShort: "AbcCdDeEFHKmoPQrtTuUwxXyYz",
		short: map[byte]string{'o': whyOutputArg, 'O': whyWrites, 'D': "writes the headers to a file", 'c': "writes cookies to a file",
			'K': "reads a config file that can set output files"},
		long: map[string]string{"output": whyOutputArg, "remote-name": whyWrites, "remote-name-all": whyWrites,
			"output-dir": whyWrites, "dump-header": "writes the headers to a file", "cookie-jar": "writes cookies to a file",
			"trace": whyWrites, "trace-ascii": whyWrites, "libcurl": whyWrites, "stderr": whyWrites, "etag-save": whyWrites,
			"hsts": whyWrites, "alt-svc": whyWrites, "config": "reads a config file that can set output files"}}
	yqTable    = &optTable{valueShort: "oIpe", short: map[byte]string{'i': whyInPlace}, long: map[string]string{"inplace": whyInPlace}}
	dmesgTable = &optTable{valueShort: "FflnsS", short: map[byte]string{'c': "clears the kernel log", 'C': "clears the kernel log"},
		long: map[string]string{"clear": "clears the kernel log", "read-clear": "clears the kernel log"}}
	batTable     = &optTable{valueShort: "lmHrd", long: map[string]string{"pager": "names a pager program to run"}}
	fileTable    = &optTable{valueShort: "mefFP", short: map[byte]string{'C': "writes a compiled magic file"}}
	sdiffTable   = &optTable{valueShort: "oIw", short: map[byte]string{'o': whyOutputArg}, long: map[string]string{"output": whyOutputArg, "diff-program": whyRuns}}
	journalTable = &optTable{valueShort: "bDuMnopSUtIFmkcgTr",
		long: map[string]string{"vacuum-size": "deletes journal files", "vacuum-time": "deletes journal files",
			"vacuum-files": "deletes journal files", "rotate": "rotates the journal", "flush": "moves the journal",
			"setup-keys": whyWrites, "update-catalog": whyWrites, "relinquish-var": "moves the journal"}}
)

// riskyTables maps a program's base name to the check of its arguments.
var riskyTables map[string]checker

func init() {
	riskyTables = map[string]checker{
		"git": checkGit, "find": tableOnly(findTable), "sort": tableOnly(sortTable),
		"sed": checkSed, "gsed": checkSed, "awk": checkAwk, "gawk": checkAwk, "mawk": checkAwk, "nawk": checkAwk,
		"less": checkLess, "man": tableOnly(manTable), "xxd": checkXxd, "tee": checkTee, "uniq": checkUniq,
		"date": checkDate, "tar": checkTar, "bsdtar": checkTar, "gtar": checkTar, "zip": checkZip,
		"fd": tableOnly(fdTable), "fdfind": tableOnly(fdTable), "rg": tableOnly(rgTable), "tree": tableOnly(treeTable),
		"rsync": tableOnly(rsyncTable), "curl": tableOnly(curlTable), "yq": tableOnly(yqTable),
		"dmesg": tableOnly(dmesgTable), "bat": tableOnly(batTable), "batcat": tableOnly(batTable),
		"file": tableOnly(fileTable), "sdiff": tableOnly(sdiffTable), "journalctl": tableOnly(journalTable),
		"ssh": checkSSH(sshTable), "scp": checkSSH(scpTable), "sftp": checkSSH(scpTable), "go": checkGo, "hostname": checkHostname,
	}
}

// riskyUnderAllowRule finds a risky option (RiskyOption) in any simple
// command of a call that an allow rule allowed; matched is the decision's
// matched_rule. An allow from an override, a tool level or the defaults is
// not an allow rule and is left alone. An option that the allowing rule's
// own pattern names as a word (`sed -i *`, or the exact command an "always
// allow" recorded) was allowed on purpose and does not count.
func (p *compiledPolicy) riskyUnderAllowRule(matched, cmd string, sh *shell.Analysis) (RiskyUse, bool) {
	if !p.mayBeAllowRule(matched) {
		return RiskyUse{}, false
	}
	// The rule's patterns are looked up only once a risky option is found:
	// most allowed commands have none.
	var patterns []string
	var exact, looked bool
	named := func(opt string) bool {
		if !looked {
			patterns, exact, _ = p.allowPatterns(matched)
			looked = true
		}
		if exact {
			// An exact pattern (the command an "always allow" recorded)
			// was approved as it is, options and all.
			return true
		}
		for _, pat := range patterns {
			if namesWord(pat, opt) {
				return true
			}
		}
		return false
	}
	check := func(argv []string) (RiskyUse, bool) {
		for range len(argv) {
			use, ok := RiskyOption(argv)
			if !ok {
				return use, false
			}
			if !named(use.Option) {
				return use, true
			}
			if exact {
				return RiskyUse{}, false
			}
			// The rule names this option: look past it for another.
			i := slices.IndexFunc(argv, func(w string) bool { return w == use.Option || strings.HasPrefix(w, use.Option+"=") })
			if i < 0 {
				return RiskyUse{}, false
			}
			argv = slices.Delete(slices.Clone(argv), i, i+1)
		}
		return RiskyUse{}, false
	}
	if sh == nil {
		// A plain command (shell.NeedsFullParse is false): its words are its
		// space-separated fields.
		if !mayHaveRiskyOption(cmd) {
			return RiskyUse{}, false
		}
		return check(strings.Fields(cmd))
	}
	for _, list := range [2][][]string{sh.Argv, sh.Commands} {
		for _, argv := range list {
			if use, ok := check(argv); ok {
				return use, true
			}
		}
	}
	return RiskyUse{}, false
}

// mayHaveRiskyOption reports whether RiskyOption may find anything in a
// plain command: its first word sets a variable, or names env or a program
// with a table of risky options. It spares the split of every other
// allowed command.
func mayHaveRiskyOption(cmd string) bool {
	for i := 0; i < len(cmd); i++ {
		if c := cmd[i]; c >= 0x80 || c != ' ' && (c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') {
			return true // strings.Fields splits there too: leave it to the full check
		}
	}
	first, _, _ := strings.Cut(strings.TrimLeft(cmd, " "), " ")
	if strings.IndexByte(first, '=') >= 0 {
		return true
	}
	prog := baseName(first)
	if prog == "env" {
		return true
	}
	_, ok := riskyTables[prog]
	return ok
}

// mayBeAllowRule reports whether a matched_rule may name allow rules whose
// options are checked (allowPatterns): tiered user or built-in rules or a
// legacy tools.<t>.patterns entry.
func (p *compiledPolicy) mayBeAllowRule(matched string) bool {
	return strings.HasPrefix(matched, "tiered_policy:rules:") || strings.HasPrefix(matched, "tiered_policy:builtin:") ||
		strings.HasPrefix(matched, "tools.") && strings.Contains(matched, ".patterns['")
}

// allowPatterns returns the patterns of the allow rules named by a
// matched_rule: tiered user or built-in rules (several joined by +) or a
// legacy tools.<t>.patterns entry; fromRule is false for anything else, and
// exact is set when one of them is a literal command (no glob, no re:).
func (p *compiledPolicy) allowPatterns(matched string) (patterns []string, exact, fromRule bool) {
	var idx *ruleIndex
	var names string
	switch {
	case strings.HasPrefix(matched, "tiered_policy:rules:"):
		idx, names = &p.user, matched[len("tiered_policy:rules:"):]
	case strings.HasPrefix(matched, "tiered_policy:builtin:"):
		idx, names = &p.builtin, matched[len("tiered_policy:builtin:"):]
	case strings.HasPrefix(matched, "tools.") && strings.Contains(matched, ".patterns['"):
		_, pat, _ := strings.Cut(matched, ".patterns['")
		pat = strings.TrimSuffix(pat, "']")
		return []string{pat}, !strings.HasPrefix(pat, "re:") && !strings.ContainsAny(pat, "*?["), true
	default:
		return nil, false, false
	}
	for name := range strings.SplitSeq(names, "+") {
		for _, r := range idx.byName[name] {
			if r.m != nil {
				patterns = append(patterns, r.m.raw)
				exact = exact || !r.m.isRegex && !r.m.hasWild
			}
		}
	}
	return patterns, exact, true
}

// namesWord reports whether pattern holds opt as a whole word: not inside
// a longer option (-o in --oneline does not count).
func namesWord(pattern, opt string) bool {
	if opt == "" {
		return false
	}
	for i := 0; ; {
		j := strings.Index(pattern[i:], opt)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(opt)
		before := start == 0 || strings.IndexByte(" \t'\"(|^:", pattern[start-1]) >= 0
		after := end == len(pattern) || strings.IndexByte(" \t'\"=)|$*", pattern[end]) >= 0
		if before && after {
			return true
		}
		i = start + 1
	}
}

// traceRisky records the escalation of an allow for a risky option.
func traceRisky(tr *tracer, use RiskyUse) {
	if tr == nil {
		return
	}
	what := use.Option
	if use.Program != "" {
		what = use.Program + " " + use.Option
	}
	tr.add(Step{Name: "risky_option", Result: "ask", Detail: what + " " + use.Reason + "; the allow rule does not name this option, so allow becomes ask", Decisive: true})
}
