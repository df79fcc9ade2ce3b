//go:build unix

package decisionlog

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"
)

// BenchmarkDecisionLogInsertBatches writes REST evaluate's entries (no
// session, channel, request or shadow outcome) through insert in batches
// of 128 to 1,024, and reports the process's CPU time per entry
// (cpu-ns/entry), which the machine's other load changes less than the
// wall time.
func BenchmarkDecisionLogInsertBatches(b *testing.B) {
	for _, size := range []int{128, 256, 512, 1024} {
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			db, _ := openDecisionTestDB(b)
			l := newLog(db, Options{})
			defer l.Close()
			call := &redactingCall{tool: "bash", args: map[string]any{"command": "npm run build --silent"}}
			batch := make([]Entry, size)
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuTime()
			for done := 0; done < b.N; done += len(batch) {
				for i := range batch {
					batch[i] = Entry{Source: "evaluate", Call: call, Level: "allow", MatchedRule: "tools.bash", Time: time.Now()}
				}
				if err := l.insert(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/entry")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
