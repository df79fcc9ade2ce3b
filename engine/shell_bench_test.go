package engine

import "testing"

// BenchmarkAnalyzeShellCompound measures a five-part compound command.
func BenchmarkAnalyzeShellCompound(b *testing.B) {
	const cmd = `cd /ws/project && git pull --rebase origin main; go test ./... | tee /tmp/test.log || echo "failed: $(date)" > ~/status.txt`
	b.ReportAllocs()
	for b.Loop() {
		AnalyzeShell(cmd, "/home/u")
	}
}

// BenchmarkAnalyzeShellWindows measures a Windows command read twice.
func BenchmarkAnalyzeShellWindows(b *testing.B) {
	const cmd = `type C:\Users\me\project\README.md && dir D:\data`
	b.ReportAllocs()
	for b.Loop() {
		AnalyzeShell(cmd, "/home/u")
	}
}

// BenchmarkNeedsFullParse measures the fast-path test on a plain command.
func BenchmarkNeedsFullParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		NeedsFullParse("git status")
	}
}
