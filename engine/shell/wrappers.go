package shell

import (
	"slices"
	"strings"
)

// wrapKind says how a command wrapper hands on the command it runs.
type wrapKind uint8

const (
	// runsCommand: options (and operands), then a command and its arguments;
	// the zero kind, which a wrapper entry without a kind has.
	//lint:ignore U1000 named for the reader: entries leave the zero kind unset
	runsCommand wrapKind = iota
	// runsScript: no command, only script text as the value of a scriptOpt
	// (su -c, script -c).
	runsScript
	// runsShell: sh -c TEXT; else a script file; else a script on stdin.
	runsShell
	// runsEval: the arguments, joined by spaces, are script text for the
	// same shell.
	runsEval
	// runsJoined: the arguments joined by spaces go to sh -c (watch).
	runsJoined
	// runsXargs: a command that gets unknown extra arguments.
	runsXargs
	// runsFind: find ... -exec CMD ... ; or + (also -execdir, -ok, -okdir).
	runsFind
	// runsTrap: trap TEXT SIGNAL... runs TEXT later in the same shell.
	runsTrap
	// runsParallel: GNU parallel CMD ::: INPUT...: the command gets each
	// input as its last argument (parallelCommands).
	runsParallel
)

// wrapper describes one command wrapper: how to skip its own options and
// operands to reach the command it runs, or which argument is script text.
type wrapper struct {
	kind wrapKind
	// valueOpts take the next argument as their value (unless written
	// --opt=value or, for one-letter options, -oVALUE).
	valueOpts []string
	// scriptOpts take script text as their value (su -c, env -S).
	scriptOpts []string
	// stopOpts mean that no command runs (command -v only prints).
	stopOpts []string
	// execOpts switch a runsJoined or runsScript wrapper to running argv
	// (watch -x, runuser -u USER CMD); one may also be a valueOpt.
	execOpts []string
	// operands is how many operands come before the command (timeout's
	// duration, flock's file, chrt's priority).
	operands int
	// assigns: NAME=VALUE operands may come before the command.
	assigns bool
}

// wrappers is the one table of command wrappers the shell analysis looks
// through (docs/decisions.md#where-toolgate-is-stricter-than-jiuwenswarm). Options not listed are flags without a value.
var wrappers = map[string]wrapper{
	"env": {valueOpts: []string{"-u", "--unset", "-C", "--chdir"},
		scriptOpts: []string{"-S", "--split-string"}, assigns: true},
	"command":  {stopOpts: []string{"-v", "-V"}},
	"builtin":  {},
	"exec":     {valueOpts: []string{"-a"}},
	"time":     {valueOpts: []string{"-f", "--format", "-o", "--output"}},
	"timeout":  {valueOpts: []string{"-s", "--signal", "-k", "--kill-after"}, operands: 1},
	"nice":     {valueOpts: []string{"-n", "--adjustment"}},
	"nohup":    {},
	"setsid":   {},
	"stdbuf":   {valueOpts: []string{"-i", "--input", "-o", "--output", "-e", "--error"}},
	"ionice":   {valueOpts: []string{"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "--pgid", "-u", "--uid"}},
	"taskset":  {operands: 1},
	"chrt":     {valueOpts: []string{"-T", "--sched-runtime", "-P", "--sched-period", "-D", "--sched-deadline"}, operands: 1},
	"unbuffer": {},
	"flock": {valueOpts: []string{"-w", "--timeout", "-E", "--conflict-exit-code"},
		scriptOpts: []string{"-c", "--command"}, operands: 1},
	"sudo": {valueOpts: []string{"-u", "--user", "-g", "--group", "-C", "--close-from", "-D", "--chdir",
		"-p", "--prompt", "-r", "--role", "-t", "--type", "-U", "--other-user", "-T", "--command-timeout",
		"-R", "--chroot", "-h", "--host"}, assigns: true},
	"doas":    {valueOpts: []string{"-u", "-C"}},
	"pkexec":  {valueOpts: []string{"--user"}},
	"chroot":  {valueOpts: []string{"--userspec", "--groups"}, operands: 1},
	"unshare": {},
	"nsenter": {valueOpts: []string{"-t", "--target", "-S", "--setuid", "-G", "--setgid"}},
	"busybox": {},
	// Launchers that change how a program runs (I/O, locale of time,
	// proxies, limits, sandboxes, debuggers) and then exec it.
	"eatmydata":        {},
	"catchsegv":        {},
	"firejail":         {},
	"valgrind":         {},
	"torsocks":         {valueOpts: []string{"-u", "--user", "-p", "--pass", "-a", "--address", "-P", "--port"}},
	"proxychains":      {valueOpts: []string{"-f"}},
	"proxychains4":     {valueOpts: []string{"-f"}},
	"faketime":         {valueOpts: []string{"-p", "--date-prog"}, operands: 1},
	"numactl":          {valueOpts: []string{"-i", "--interleave", "-p", "--preferred", "-m", "--membind", "-C", "--physcpubind", "-N", "--cpunodebind"}},
	"prlimit":          {valueOpts: []string{"-p", "--pid"}},
	"cpulimit":         {valueOpts: []string{"-l", "--limit", "-p", "--pid", "-e", "--exe"}},
	"setpriv":          {valueOpts: []string{"--reuid", "--regid", "--ruid", "--rgid", "--euid", "--egid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile"}},
	"xvfb-run":         {valueOpts: []string{"-n", "--server-num", "-s", "--server-args", "-f", "--auth-file", "-e", "--error-file", "-p", "--xauth-protocol", "-w", "--wait"}},
	"dbus-run-session": {valueOpts: []string{"--config-file", "--dbus-daemon"}},
	"fakeroot":         {valueOpts: []string{"-l", "--lib", "--faked", "-s", "-i", "-b"}},
	"fakechroot":       {valueOpts: []string{"-l", "--lib", "-d", "--elfloader", "-e", "--environment", "-c", "--config-dir"}},
	"ssh-agent":        {valueOpts: []string{"-a", "-E", "-t", "-P", "-O"}},
	"strace":           {valueOpts: []string{"-e", "-o", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-P", "-S", "-X", "-U"}},
	"ltrace":           {valueOpts: []string{"-e", "-o", "-p", "-s", "-u", "-a", "-A", "-D", "-F", "-n", "-l", "-x", "-w"}},
	"su": {kind: runsScript, valueOpts: []string{"-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment"},
		scriptOpts: []string{"-c", "--command"}},
	"runuser": {kind: runsScript, valueOpts: []string{"-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w", "--whitelist-environment", "-u", "--user"},
		execOpts: []string{"-u", "--user"}, scriptOpts: []string{"-c", "--command"}},
	"script": {kind: runsScript, valueOpts: []string{"-E", "--echo", "-I", "--log-in", "-O", "--log-out", "-B", "--log-io", "-T", "--log-timing", "-m", "--logging-format"},
		scriptOpts: []string{"-c", "--command"}},
	"eval":  {kind: runsEval},
	"trap":  {kind: runsTrap},
	"watch": {kind: runsJoined, valueOpts: []string{"-n", "--interval", "-q", "--equexit"}, execOpts: []string{"-x", "--exec"}},
	"xargs": {kind: runsXargs, valueOpts: []string{"-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "--max-lines",
		"-n", "--max-args", "-P", "--max-procs", "-s", "--max-chars", "--process-slot-var"}},
	"find": {kind: runsFind},
	"parallel": {kind: runsParallel, valueOpts: []string{"-a", "--arg-file", "--colsep", "-C", "-d", "--delimiter",
		"-E", "--eof", "-I", "--replace", "-j", "--jobs", "-P", "--max-procs", "-L", "--max-lines", "-n", "--max-args",
		"-N", "--results", "--res", "--joblog", "--tmpdir", "--workdir", "--wd", "-S", "--sshlogin", "--sshloginfile",
		"--slf", "--env", "--timeout", "--delay", "--memfree", "--load", "--tag-string", "--tagstring", "--basefile",
		"--bf", "--transferfile", "--tf", "--return", "--template", "--shebang-wrap", "--retries", "--halt"}},
	"sh": {kind: runsShell}, "bash": {kind: runsShell}, "dash": {kind: runsShell}, "zsh": {kind: runsShell},
	"ksh": {kind: runsShell}, "mksh": {kind: runsShell}, "ash": {kind: runsShell}, "yash": {kind: runsShell},
	"posh": {kind: runsShell}, "fish": {kind: runsShell}, "rbash": {kind: runsShell},
}

// maxWrapLayers bounds how many wrappers one command may stack; a deeper
// stack is reported as beyond the analysis (TooDeep).
const maxWrapLayers = 16

// programName is a program word as rules name it: its base name without a
// Windows executable suffix, in lower case when it had one (/usr/bin/rm is
// rm, GIT.EXE is git; docs/decisions.md#unlisted-launchers). It allocates
// only for a suffixed name written in upper case.
func programName(word string) string {
	if i := strings.LastIndexByte(word, '/'); i >= 0 && i < len(word)-1 {
		word = word[i+1:]
	}
	n := exeSuffix(word)
	if n == 0 || n == len(word) {
		return word
	}
	word = word[:len(word)-n]
	if hasUpper(word) {
		return strings.ToLower(word)
	}
	return word
}

// optScan is the result of skipping a wrapper's options.
type optScan struct {
	next    int // index of the command (len(args) when none)
	script  int // index of the field holding script text, -1 for none
	text    string
	stopped bool // a stopOpt: no command runs
	exec    bool // an execOpt was given
	assigns []string
	chdir   bool
}

// scanOpts skips the options, NAME=VALUE assignments and operands of a
// wrapper whose arguments are args (args[0] is the wrapper).
func scanOpts(spec *wrapper, args []string) optScan {
	s := optScan{script: -1}
	operands := spec.operands
	i := 1
	for i < len(args) {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if spec.assigns && strings.IndexByte(a, '=') > 0 && a[0] != '-' {
			// env takes any word with = before the command as an
			// assignment, names a shell would refuse included
			// (BASH_FUNC_name%%=..., an exported function).
			s.assigns = append(s.assigns, a)
			i++
			continue
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' {
			// A cluster of one-letter options, as getopt reads it: -Eu
			// root is -E -u root, -qc TEXT is -q -c TEXT.
			next, done := s.cluster(spec, args, i)
			if done {
				return s
			}
			i = next
			continue
		}
		if len(a) > 1 && a[0] == '-' {
			name, val, eq := a, "", false
			if strings.HasPrefix(a, "--") {
				name, val, eq = strings.Cut(a, "=")
			}
			s.exec = s.exec || slices.Contains(spec.execOpts, name)
			switch {
			case slices.Contains(spec.stopOpts, name):
				s.stopped = true
				return s
			case slices.Contains(spec.scriptOpts, name):
				switch {
				case eq:
					s.script, s.text = i, val
				case i+1 < len(args):
					s.script, s.text = i+1, args[i+1]
				}
				s.next = len(args)
				return s
			case slices.Contains(spec.valueOpts, name) && !eq:
				if name == "-C" || name == "--chdir" || name == "-D" {
					s.chdir = true
				}
				i += 2
				continue
			}
			i++
			continue
		}
		if operands > 0 || spec.kind == runsScript && !s.exec {
			// su and script take operands (a user, a log file) around -c.
			operands--
			i++
			continue
		}
		break
	}
	s.next = min(i, len(args))
	return s
}

// cluster reads the one-letter options of args[i] (such as -qc) in order
// and returns the index of the next argument; done is set when the scan is
// over (a stopOpt, or script text).
func (s *optScan) cluster(spec *wrapper, args []string, i int) (next int, done bool) {
	a := args[i]
	for j := 1; j < len(a); j++ {
		name, rest := "-"+a[j:j+1], a[j+1:]
		s.exec = s.exec || slices.Contains(spec.execOpts, name)
		switch {
		case slices.Contains(spec.stopOpts, name):
			s.stopped = true
			return i, true
		case slices.Contains(spec.scriptOpts, name):
			switch {
			case rest != "":
				s.script, s.text = i, rest
			case i+1 < len(args):
				s.script, s.text = i+1, args[i+1]
			}
			s.next = len(args)
			return i, true
		case slices.Contains(spec.valueOpts, name):
			if name == "-C" || name == "-D" {
				s.chdir = true
			}
			if rest != "" {
				return i + 1, false // -uroot: the value is the rest
			}
			return i + 2, false
		}
	}
	return i + 1, false
}

// shellScan is how a shell (sh, bash, ...) was asked to run.
type shellScan struct {
	script int  // index of the -c text, -1 for none
	file   bool // a script file operand
	stdin  bool // the script comes from standard input
}

// scanShell reads a shell's options: -c (alone or in a cluster such as
// -ec or -lc) makes the first operand script text; -s or no operand reads
// the script from standard input; -o, +o, -O, +O, --rcfile and
// --init-file take a value.
func scanShell(args []string) shellScan {
	s := shellScan{script: -1}
	cflag, sflag := false, false
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" {
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' && a[0] != '+' {
			break
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			continue
		}
		if a[0] == '-' {
			cflag = cflag || strings.IndexByte(a[1:], 'c') >= 0
			sflag = sflag || strings.IndexByte(a[1:], 's') >= 0
		}
		if last := a[len(a)-1]; last == 'o' || last == 'O' {
			i++
		}
	}
	switch {
	case cflag && i < len(args):
		s.script = i
	case cflag:
	case sflag || i >= len(args):
		s.stdin = true
	default:
		s.file = true
	}
	return s
}

// findExec is one command find runs and the index of its first word in
// find's arguments.
type findExec struct {
	argv  []string
	start int
}

// findExecs returns the commands find runs: the words after each -exec,
// -execdir, -ok or -okdir up to ; or {} +, with {} (the found path, not
// known here) replaced by UnknownMark.
func findExecs(args []string) []findExec {
	var out []findExec
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		start := i + 1
		end := start
		for end < len(args) && args[end] != ";" && !(args[end] == "+" && end > start && args[end-1] == "{}") {
			end++
		}
		if end > start {
			cmd := make([]string, 0, end-start)
			for _, w := range args[start:end] {
				cmd = append(cmd, strings.ReplaceAll(w, "{}", UnknownMark))
			}
			out = append(out, findExec{argv: cmd, start: start})
		}
		i = end
	}
	return out
}
