package shell

import (
	"slices"
	"testing"
)

// TestWrapperTable checks every row of the wrapper table: the analysis looks
// through the wrapper, its options and operands, to the command it runs.
func TestWrapperTable(t *testing.T) {
	tests := []struct {
		note string
		cmd  string
	}{
		{note: "env", cmd: "env rm -rf /"},
		{note: "env options and assignments", cmd: "env -i -u HOME -C /tmp A=1 B=2 rm -rf /"},
		{note: "env --", cmd: "env -- rm -rf /"},
		{note: "command", cmd: "command -p rm -rf /"},
		{note: "builtin", cmd: "builtin rm -rf /"},
		{note: "exec", cmd: "exec -a name rm -rf /"},
		{note: "time", cmd: "/usr/bin/time -f %e -o out.txt rm -rf /"},
		{note: "timeout", cmd: "timeout -s KILL -k 5 10 rm -rf /"},
		{note: "timeout --signal=", cmd: "timeout --signal=KILL 10s rm -rf /"},
		{note: "nice -n", cmd: "nice -n 5 rm -rf /"},
		{note: "nice -N", cmd: "nice -10 rm -rf /"},
		{note: "nohup", cmd: "nohup rm -rf /"},
		{note: "setsid", cmd: "setsid -f rm -rf /"},
		{note: "stdbuf attached", cmd: "stdbuf -o0 -e0 rm -rf /"},
		{note: "stdbuf separate", cmd: "stdbuf -o L rm -rf /"},
		{note: "ionice", cmd: "ionice -c 3 -n 7 rm -rf /"},
		{note: "taskset", cmd: "taskset -c 0,1 rm -rf /"},
		{note: "chrt", cmd: "chrt --idle 0 rm -rf /"},
		{note: "unbuffer", cmd: "unbuffer -p rm -rf /"},
		{note: "flock", cmd: "flock -w 5 /tmp/lock rm -rf /"},
		{note: "sudo", cmd: "sudo -u root -E rm -rf /"},
		{note: "sudo assignment", cmd: "sudo -n FOO=1 rm -rf /"},
		{note: "doas", cmd: "doas -u root rm -rf /"},
		{note: "pkexec", cmd: "pkexec --user root rm -rf /"},
		{note: "chroot", cmd: "chroot / rm -rf /"},
		{note: "unshare", cmd: "unshare -r rm -rf /"},
		{note: "nsenter", cmd: "nsenter -t 1 -m rm -rf /"},
		{note: "busybox", cmd: "busybox rm -rf /"},
		{note: "strace", cmd: "strace -f -e trace=file -o /dev/null rm -rf /"},
		{note: "ltrace", cmd: "ltrace -f rm -rf /"},
		{note: "xargs", cmd: "xargs -0 -n 1 -P 4 rm -rf /"},
		{note: "parallel, one input list", cmd: "parallel -j 4 rm -rf ::: /"},
		{note: "parallel, command lines as inputs", cmd: "parallel ::: 'rm -rf /' 'echo done'"},
		{note: "parallel, inputs on stdin", cmd: "parallel --jobs 2 rm -rf /"},
		{note: "find -exec ;", cmd: `find . -exec rm -rf / \;`},
		{note: "find -execdir +", cmd: "find . -execdir rm -rf / {} +"},
		{note: "find -ok", cmd: `find . -ok rm -rf / ';'`},
		{note: "watch", cmd: "watch -n 1 rm -rf /"},
		{note: "watch -x", cmd: "watch -x rm -rf /"},
		{note: "program path", cmd: "/usr/bin/rm -rf /"},
		{note: "backslash", cmd: `\rm -rf /`},
		{note: "quoted name", cmd: `'rm' -rf /`},
		{note: "stacked", cmd: "nohup nice -n 5 timeout 10 sudo -u root env A=1 stdbuf -o0 rm -rf /"},
		{note: "su -c", cmd: "su -c 'rm -rf /'"},
		{note: "runuser -c", cmd: "runuser -l root -c 'rm -rf /'"},
		{note: "script -c", cmd: "script -q -c 'rm -rf /' /dev/null"},
		{note: "eval", cmd: "eval rm -rf /"},
		{note: "trap", cmd: "trap 'rm -rf /' EXIT"},
		{note: "sh -c", cmd: "sh -c 'rm -rf /'"},
		{note: "bash -xec", cmd: "bash -xec 'rm -rf /'"},
		{note: "fish -c", cmd: "fish -c 'rm -rf /'"},
		{note: "script -qc cluster", cmd: "script -qc 'rm -rf /' /dev/null"},
		{note: "su -lc cluster", cmd: "su -lc 'rm -rf /'"},
		{note: "flock -xc cluster", cmd: "flock -xc 'rm -rf /' /tmp/lock"},
		{note: "sudo -Eu cluster takes the next word", cmd: "sudo -Eu root rm -rf /"},
		{note: "runuser -u runs argv", cmd: "runuser -u root -- rm -rf /"},
		{note: "runuser --user=", cmd: "runuser --user=root rm -rf /"},
		{note: "eatmydata", cmd: "eatmydata rm -rf /"},
		{note: "catchsegv", cmd: "catchsegv rm -rf /"},
		{note: "firejail", cmd: "firejail --noprofile rm -rf /"},
		{note: "valgrind", cmd: "valgrind --tool=memcheck rm -rf /"},
		{note: "torsocks", cmd: "torsocks -a 127.0.0.1 -P 9050 rm -rf /"},
		{note: "proxychains", cmd: "proxychains -f /etc/p.conf rm -rf /"},
		{note: "proxychains4", cmd: "proxychains4 -q rm -rf /"},
		{note: "faketime", cmd: "faketime -f '+2d' rm -rf /"},
		{note: "numactl", cmd: "numactl -N 0 --membind 0 rm -rf /"},
		{note: "prlimit", cmd: "prlimit --nofile=10 rm -rf /"},
		{note: "cpulimit", cmd: "cpulimit -l 5 rm -rf /"},
		{note: "setpriv", cmd: "setpriv --reuid 0 --clear-groups rm -rf /"},
		{note: "xvfb-run", cmd: "xvfb-run -a -s '-screen 0 1x1x8' rm -rf /"},
		{note: "dbus-run-session", cmd: "dbus-run-session -- rm -rf /"},
		{note: "fakeroot", cmd: "fakeroot -s state rm -rf /"},
		{note: "fakechroot", cmd: "fakechroot -e none rm -rf /"},
		{note: "ssh-agent", cmd: "ssh-agent -t 60 rm -rf /"},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			a := AnalyzeEnv(tt.cmd, testEnv)
			if !slices.Contains(a.Normalized, "rm -rf /") && !slices.Contains(a.Normalized, "rm -rf / "+InputMark) {
				t.Errorf("AnalyzeEnv(%q).Normalized = %s, want it to hold rm -rf /", tt.cmd, shown(a.Normalized))
			}
		})
	}
	// Each row of the table is exercised above (a row added without a test
	// fails here).
	tested := map[string]bool{"rm": true}
	for _, tt := range tests {
		a := AnalyzeEnv(tt.cmd, testEnv)
		for _, argv := range a.Argv {
			tested[argv[0]] = true
		}
	}
	for name := range wrappers {
		if !tested[name] && !shellNames[name] {
			t.Errorf("wrapper %q has no case in TestWrapperTable", name)
		}
	}
}

// shellNames are the rows of the table that are shells, tested through sh,
// bash and fish above (they share one kind).
var shellNames = map[string]bool{"dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true,
	"yash": true, "posh": true, "rbash": true}

// TestWrapperNotCommand checks options that keep a wrapper from running a
// command, and shells that run a script file.
func TestWrapperNotCommand(t *testing.T) {
	tests := []struct {
		note string
		cmd  string
		not  string
	}{
		{note: "command -v prints", cmd: "command -v rm", not: "rm"},
		{note: "bash runs a file", cmd: "bash ./build.sh", not: "./build.sh"},
		{note: "su without -c runs no argument", cmd: "su root", not: "root"},
	}
	for _, tt := range tests {
		t.Run(tt.note, func(t *testing.T) {
			a := AnalyzeEnv(tt.cmd, testEnv)
			if slices.Contains(a.Normalized, tt.not) {
				t.Errorf("AnalyzeEnv(%q).Normalized = %s, want no %q", tt.cmd, shown(a.Normalized), tt.not)
			}
		})
	}
}
