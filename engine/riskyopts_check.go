package engine

import (
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
)

// The checks of programs whose risk is not a plain option: git (global
// options, then per-subcommand ones), sed and awk (the script text), tar
// (mode letters), and programs whose operands write (tee, uniq, xxd, date).

// gitSubTables are the risky options of git subcommands. The diff options
// are shared by every command that shows a diff.
var gitSubTables = func() map[string]*optTable {
	diffLong := map[string]string{
		"output":   "writes its output to the file named",
		"ext-diff": "runs the external diff program configured",
		"textconv": "runs the configured text conversion programs",
	}
	diff := &optTable{long: diffLong, safeLong: []string{"text"}}
	withDiff := func(short map[byte]string, long map[string]string, valueShort string) *optTable {
		all := map[string]string{}
		for k, v := range diffLong {
			all[k] = v
		}
		for k, v := range long {
			all[k] = v
		}
		return &optTable{valueShort: valueShort, short: short, long: all, safeLong: []string{"text"}}
	}
	uploadPack := map[string]string{"upload-pack": "names the program run on the other side"}
	m := map[string]*optTable{
		"format-patch": withDiff(map[byte]string{'o': "writes patch files into the directory named"},
			map[string]string{"output-directory": "writes patch files into the directory named"}, "ovn"),
		"grep": {valueShort: "eABCfm", short: map[byte]string{'O': "opens the files found in a pager program"},
			long:     map[string]string{"open-files-in-pager": "opens the files found in a pager program", "textconv": diffLong["textconv"]},
			safeLong: []string{"text"}},
		"cat-file": {long: map[string]string{"textconv": diffLong["textconv"], "filters": "runs the configured filter programs"}},
		"blame":    {long: map[string]string{"textconv": diffLong["textconv"]}},
		"annotate": {long: map[string]string{"textconv": diffLong["textconv"]}},
		"fetch":    {long: uploadPack}, "pull": {long: uploadPack}, "ls-remote": {long: uploadPack},
		"clone": {valueShort: "obujc", short: map[byte]string{'u': uploadPack["upload-pack"], 'c': "sets configuration that can name programs to run"},
			long: map[string]string{"upload-pack": uploadPack["upload-pack"], "template": "installs hooks from the directory named",
				"config": "sets configuration that can name programs to run"}},
		"push": {long: map[string]string{"receive-pack": "names the program run on the other side", "exec": "names the program run on the other side"}},
		"archive": {valueShort: "o", short: map[byte]string{'o': "writes the archive to the file named"},
			long: map[string]string{"output": "writes the archive to the file named", "exec": "names the program run on the other side"}},
		"rebase":    {valueShort: "xsX", short: map[byte]string{'x': "runs a command after each commit"}, long: map[string]string{"exec": "runs a command after each commit"}},
		"difftool":  {valueShort: "xt", short: map[byte]string{'x': "runs the program named", 't': "runs the tool named"}, long: map[string]string{"extcmd": "runs the program named", "tool": "runs the tool named"}},
		"mergetool": {valueShort: "t", short: map[byte]string{'t': "runs the tool named"}, long: map[string]string{"tool": "runs the tool named"}},
	}
	for _, sub := range []string{"log", "show", "diff", "whatchanged", "range-diff", "diff-tree", "diff-files", "diff-index", "reflog", "stash"} {
		m[sub] = diff
	}
	return m
}()

// gitValueOptions are git's global options that take the next word.
var gitValueOptions = map[string]bool{"-C": true, "--git-dir": true, "--work-tree": true, "--namespace": true, "--super-prefix": true, "--list-cmds": true}

// checkGit checks git's global options (-c and --config-env set any
// configuration, which can name a pager, editor or diff program), then the
// subcommand's own.
func checkGit(args []string) (string, string, bool) {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		w := args[i]
		name, _, _ := strings.Cut(w, "=")
		switch {
		case strings.HasPrefix(w, "-c"):
			return "-c", "sets a configuration value, which can name a pager, editor or diff program to run", true
		case name == "--config-env":
			return name, "sets a configuration value, which can name a pager, editor or diff program to run", true
		case name == "--exec-path" && strings.Contains(w, "="):
			return name, "runs git's programs from the directory named", true
		case gitValueOptions[w]:
			i++
		}
	}
	if i >= len(args) {
		return "", "", false
	}
	sub, rest := args[i], args[i+1:]
	switch {
	case sub == "bisect" && len(rest) > 0 && rest[0] == "run":
		return "bisect run", "runs the program named for each step", true
	case sub == "submodule" && containsWord(rest, "foreach"):
		return "submodule foreach", "runs a command in every submodule", true
	}
	if t, ok := gitSubTables[sub]; ok {
		return t.scan(rest, nil)
	}
	return "", "", false
}

func containsWord(words []string, w string) bool {
	for _, x := range words {
		if x == w {
			return true
		}
	}
	return false
}

var sedTable = &optTable{valueShort: "efl", short: map[byte]string{'i': "edits files in place", 'f': "runs a script file whose commands cannot be checked"},
	long:      map[string]string{"in-place": "edits files in place", "file": "runs a script file whose commands cannot be checked"},
	longValue: []string{"expression", "line-length"}}

// checkSed checks sed's options and its script: the e command and the e
// flag of s run commands, w and W (and the w flag) write files.
func checkSed(args []string) (string, string, bool) {
	if opt, why, bad := sedTable.scan(args, nil); bad {
		return opt, why, true
	}
	for _, script := range sedScripts(args) {
		if cmd, why, bad := sedScriptRisk(script); bad {
			return cmd, why, true
		}
	}
	return "", "", false
}

// sedScripts returns the -e/--expression scripts, or else the first operand.
func sedScripts(args []string) []string {
	var scripts, operands []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--":
			operands = append(operands, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(w, "--expression="):
			scripts = append(scripts, w[len("--expression="):])
		case w == "--expression" && i+1 < len(args):
			i++
			scripts = append(scripts, args[i])
		case strings.HasPrefix(w, "--"):
		case len(w) > 1 && w[0] == '-':
			for j := 1; j < len(w); j++ {
				if c := w[j]; c == 'e' || c == 'f' || c == 'l' {
					val := w[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i]
					}
					if c == 'e' {
						scripts = append(scripts, val)
					}
					break
				}
			}
		default:
			operands = append(operands, w)
		}
	}
	if len(scripts) == 0 && len(operands) > 0 {
		scripts = operands[:1]
	}
	return scripts
}

// sedScriptRisk reads a sed script far enough to find its commands.
func sedScriptRisk(s string) (string, string, bool) {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case strings.IndexByte(" \t\n;{}!0123456789$,~+", c) >= 0:
			i++
		case c == '/':
			i = skipDelimited(s, i+1, '/')
		case c == '\\' && i+1 < len(s):
			i = skipDelimited(s, i+2, s[i+1])
		case c == 's' || c == 'y':
			if i+1 >= len(s) {
				return "", "", false
			}
			d := s[i+1]
			i = skipDelimited(s, skipDelimited(s, i+2, d), d)
			if c == 'y' {
				continue
			}
			for ; i < len(s) && strings.IndexByte("gpiImMew0123456789", s[i]) >= 0; i++ {
				if s[i] == 'e' {
					return "s///e", "runs the result of a substitution as a command", true
				}
				if s[i] == 'w' {
					return "s///w", "writes to the file named", true
				}
			}
		case c == 'e':
			return "e", "runs a command", true
		case c == 'w' || c == 'W':
			return string(c), "writes to the file named", true
		case strings.IndexByte("aicrR", c) >= 0:
			i = endOfLine(s, i)
		case strings.IndexByte("btT:", c) >= 0:
			i++
			for i < len(s) && s[i] != ';' && s[i] != '\n' {
				i++
			}
		default:
			i++
		}
	}
	return "", "", false
}

// skipDelimited returns the index after the next unescaped d at or after i.
func skipDelimited(s string, i int, d byte) int {
	for ; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == d {
			return i + 1
		}
	}
	return len(s)
}

func endOfLine(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}

var awkTable = &optTable{valueShort: "vFfEilW", short: map[byte]string{
	'f': "runs a program file whose text cannot be checked", 'E': "runs a program file whose text cannot be checked",
	'i': "includes a program file whose text cannot be checked", 'l': "loads an extension library"},
	long: map[string]string{"file": "runs a program file whose text cannot be checked", "exec": "runs a program file whose text cannot be checked",
		"include": "includes a program file whose text cannot be checked", "load": "loads an extension library"},
	longValue: []string{"assign", "field-separator"}}

// checkAwk checks awk's options and its program text: system(), pipes to
// or from commands, and print or printf redirected to a file.
func checkAwk(args []string) (string, string, bool) {
	var operands []string
	if opt, why, bad := awkTable.scan(args, &operands); bad {
		return opt, why, true
	}
	if len(operands) == 0 {
		return "", "", false
	}
	return awkProgramRisk(operands[0])
}

// awkProgramRisk looks for the ways an awk program runs commands or writes
// files, with string literals blanked first so their text does not count.
func awkProgramRisk(prog string) (string, string, bool) {
	p := blankAwkStrings(prog)
	for _, w := range []string{"system", "@load", "@include"} {
		if i := strings.Index(p, w); i >= 0 && (w[0] == '@' || strings.HasPrefix(strings.TrimLeft(p[i+len(w):], " \t"), "(")) {
			return w, "runs a command or loads code from awk", true
		}
	}
	if strings.Contains(p, "|&") {
		return "|&", "runs a coprocess from awk", true
	}
	for _, stmt := range strings.FieldsFunc(p, func(r rune) bool { return r == ';' || r == '{' || r == '}' || r == '\n' }) {
		if i := strings.Index(stmt, "getline"); i >= 0 && strings.HasSuffix(strings.TrimRight(stmt[:i], " \t"), "|") {
			return "| getline", "runs a command from awk", true
		}
		at := awkPrintAt(stmt)
		if at < 0 {
			continue
		}
		tail := stmt[at:]
		if j := strings.IndexAny(tail, ">|"); j >= 0 && !strings.HasPrefix(tail[j:], "||") {
			if tail[j] == '|' {
				return "print |", "pipes awk output into a command", true
			}
			return "print >", "writes awk output to a file", true
		}
	}
	return "", "", false
}

// awkPrintAt returns the index after the print or printf keyword, or -1.
func awkPrintAt(stmt string) int {
	for i := 0; i+5 <= len(stmt); i++ {
		if stmt[i:i+5] != "print" || i > 0 && shell.IsWordByte(stmt[i-1]) {
			continue
		}
		end := i + 5
		if end < len(stmt) && stmt[end] == 'f' {
			end++
		}
		if end == len(stmt) || !shell.IsWordByte(stmt[end]) {
			return end
		}
	}
	return -1
}

// blankAwkStrings replaces the contents of "..." literals with nothing.
func blankAwkStrings(p string) string {
	if !strings.Contains(p, `"`) {
		return p
	}
	var b strings.Builder
	in := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
			b.WriteByte(c)
		case !in:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// checkLess checks less's options and its +command operands: a command
// other than a search or a move can run a shell command (! or |) or save
// the input (s).
func checkLess(args []string) (string, string, bool) {
	return lessTable.riskyOperand(args, "runs a less command at start, which can run a shell command or save the input",
		func(_ int, w string) bool {
			if !strings.HasPrefix(w, "+") {
				return false
			}
			cmd := strings.TrimLeft(w, "+")
			return !(cmd == "" || cmd[0] == '/' || cmd[0] == '?' || strings.Trim(cmd, "0123456789") == "" ||
				len(strings.TrimLeft(cmd, "0123456789")) == 1 && strings.ContainsAny(strings.TrimLeft(cmd, "0123456789"), "gGFpP%"))
		})
}

// checkXxd: -r writes binary from a dump; a second operand is a file that
// xxd writes.
func checkXxd(args []string) (string, string, bool) {
	values := map[string]bool{"-c": true, "-cols": true, "-g": true, "-groupsize": true, "-l": true, "-len": true,
		"-s": true, "-seek": true, "-o": true, "-offset": true, "-n": true, "-name": true}
	n := 0
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "-r" || w == "-revert" || strings.HasPrefix(w, "-r") && len(w) <= 3:
			return w, "turns a dump back into binary, to patch or write files", true
		case values[w]:
			i++
		case len(w) > 1 && w[0] == '-':
		default:
			n++
			if n == 2 {
				return w, "writes its output to the file named", true
			}
		}
	}
	return "", "", false
}

var teeTable = &optTable{}

// checkTee: every file operand of tee is written.
func checkTee(args []string) (string, string, bool) {
	return teeTable.riskyOperand(args, "writes (or appends) to the file named", func(_ int, w string) bool {
		switch w {
		case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-":
			return false
		}
		return true
	})
}

var uniqTable = &optTable{valueShort: "fsw", longValue: []string{"skip-fields", "skip-chars", "check-chars", "all-repeated", "group"}}

// checkUniq: uniq's second operand is an output file.
func checkUniq(args []string) (string, string, bool) {
	return uniqTable.riskyOperand(args, "writes its output to the file named", func(i int, _ string) bool { return i == 1 })
}

var dateTable = &optTable{valueShort: "dfr", short: map[byte]string{'s': "sets the system clock"},
	long: map[string]string{"set": "sets the system clock"}, longValue: []string{"date", "file", "reference"}}

// checkDate: -s and a bare time operand (not +FORMAT) set the clock.
func checkDate(args []string) (string, string, bool) {
	return dateTable.riskyOperand(args, "sets the system clock", func(_ int, w string) bool { return !strings.HasPrefix(w, "+") })
}

var hostnameTable = &optTable{short: map[byte]string{'F': "sets the host name", 'b': "sets the host name"},
	long: map[string]string{"file": "sets the host name", "boot": "sets the host name"}}

// checkHostname: an operand sets the host name.
func checkHostname(args []string) (string, string, bool) {
	return hostnameTable.riskyOperand(args, "sets the host name", func(int, string) bool { return true })
}

// tarLong are tar's long options that write files or run programs; the
// extract forms are safe with --to-stdout.
var tarLong = map[string]string{
	"to-command": "runs a program for each file", "checkpoint-action": "can run a program at checkpoints",
	"use-compress-program": "runs the compression program named", "rsh-command": "runs the remote shell program named",
	"info-script": "runs a script at each volume", "new-volume-script": "runs a script at each volume",
	"create": "writes an archive", "append": "writes into an archive", "update": "writes into an archive",
	"catenate": "writes into an archive", "concatenate": "writes into an archive", "delete": "deletes from an archive",
	"remove-files": "deletes the files archived", "index-file": "writes the listing to the file named",
}

var tarLetters = map[byte]string{'c': "writes an archive", 'r': "writes into an archive", 'u': "writes into an archive",
	'A': "writes into an archive", 'I': "runs the compression program named", 'F': "runs a script at each volume"}

// checkTar checks tar's mode letters (old style without a dash too) and
// options; extraction writes files unless -O/--to-stdout sends them to the
// standard output.
func checkTar(args []string) (string, string, bool) {
	extract, toStdout := "", false
	letters := func(w string, from int, stopAtValue bool) (string, string, bool) {
		for j := from; j < len(w); j++ {
			c := w[j]
			if why, ok := tarLetters[c]; ok {
				return w, why, true
			}
			switch c {
			case 'x':
				extract = w
			case 'O':
				toStdout = true
			}
			if stopAtValue && strings.IndexByte("fCTXbgKLNVH", c) >= 0 {
				break
			}
		}
		return "", "", false
	}
	for i, w := range args {
		switch {
		case i == 0 && w != "" && w[0] != '-':
			if opt, why, bad := letters(w, 0, false); bad {
				return opt, why, true
			}
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(w[2:], "=")
			t := optTable{long: tarLong, safeLong: []string{"checkpoint", "to-stdout"}}
			if why, ok := t.longRisk(name); ok {
				return "--" + name, why, true
			}
			switch name {
			case "extract", "get":
				extract = w
			case "to-stdout":
				toStdout = true
			}
		case len(w) > 1 && w[0] == '-':
			if opt, why, bad := letters(w, 1, true); bad {
				return opt, why, true
			}
		}
	}
	if extract != "" && !toStdout {
		return extract, "extracts files, writing them", true
	}
	return "", "", false
}

var zipTable = &optTable{noBundles: true, single: map[string]string{"-TT": "runs the test program named"},
	long: map[string]string{"unzip-command": "runs the test program named"}}

func checkZip(args []string) (string, string, bool) { return zipTable.scan(args, nil) }

var (
	sshTable = &optTable{valueShort: "BbcDEeFIiJLlmOopQRSWw", short: map[byte]string{'F': "reads a configuration that can name a program to run"}}
	scpTable = &optTable{valueShort: "cDFiJloPS", short: map[byte]string{'F': "reads a configuration that can name a program to run",
		'S': "names the program used for the connection", 'D': "names the sftp server program to run"}}
	sshCommandOptions = []string{"proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match", "include"}
)

// checkSSH checks ssh, scp and sftp: -o ProxyCommand and the like run a
// local program; -F reads a configuration that can.
func checkSSH(table *optTable) checker {
	return func(args []string) (string, string, bool) {
		for i := 0; i < len(args); i++ {
			w := args[i]
			var val string
			switch {
			case w == "-o" && i+1 < len(args):
				i++
				val = args[i]
			case strings.HasPrefix(w, "-o"):
				val = w[2:]
			default:
				continue
			}
			fields := strings.FieldsFunc(val, func(r rune) bool { return r == '=' || r == ' ' || r == '\t' })
			if len(fields) == 0 {
				continue
			}
			key := strings.ToLower(fields[0])
			for _, k := range sshCommandOptions {
				if key == k {
					return "-o " + key, "runs a local program for the connection", true
				}
			}
		}
		return table.scan(args, nil)
	}
}

// checkGo: -toolexec, -exec and -vettool run the program named.
func checkGo(args []string) (string, string, bool) {
	for _, w := range args {
		if !strings.HasPrefix(w, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-"), "=")
		switch name {
		case "toolexec", "exec", "vettool":
			return "-" + name, "runs the program named", true
		}
	}
	return "", "", false
}
