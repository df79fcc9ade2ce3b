package shell

import "testing"

// BenchmarkAnalyzeShellCompound measures a five-part compound command.
func BenchmarkAnalyzeShellCompound(b *testing.B) {
	const cmd = `cd /ws/project && git pull --rebase origin main; go test ./... | tee /tmp/test.log || echo "failed: $(date)" > ~/status.txt`
	b.ReportAllocs()
	for b.Loop() {
		Analyze(cmd, "/home/u")
	}
}

// BenchmarkAnalyzeShellWindows measures a Windows command read twice.
func BenchmarkAnalyzeShellWindows(b *testing.B) {
	const cmd = `type C:\Users\me\project\README.md && dir D:\data`
	b.ReportAllocs()
	for b.Loop() {
		Analyze(cmd, "/home/u")
	}
}

// BenchmarkAnalyzeShellObfuscated measures the analysis of the obfuscation red team's
// forms: wrappers, expansions and script text read again.
func BenchmarkAnalyzeShellObfuscated(b *testing.B) {
	for _, c := range []struct{ name, cmd string }{
		{"wrappers", `nice -n 5 sudo /bin/rm -rf '/'`},
		{"expansions", `cat $X/etc/shadow {/a,/b}/c ~/.ssh/id_rsa $'\x2fetc\x2fpasswd'`},
		{"reparse", `bash -c $'eval \'sh -c "rm -rf ~"\''`},
	} {
		env := Env{Home: "/home/u", Dir: "/ws/project"}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				AnalyzeEnv(c.cmd, env)
			}
		})
	}
}

// BenchmarkNeedsFullParse measures the fast-path test on a plain command.
func BenchmarkNeedsFullParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		NeedsFullParse("git status")
	}
}
