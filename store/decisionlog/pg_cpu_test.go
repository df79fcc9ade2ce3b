//go:build linux

package decisionlog

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/store/pg"
)

// clockTick is the unit of /proc/<pid>/stat CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// processCPU is the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU is the CPU time the PostgreSQL server behind db has used: its
// postmaster and every child, live or reaped, read from /proc. It is 0
// where /proc cannot tell (not Linux, another machine).
func serverCPU(db *pg.DB) time.Duration {
	var backend int
	if err := db.Pool().QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return 0
	}
	st, ok := procStat(backend)
	if !ok {
		return 0
	}
	postmaster, _ := strconv.Atoi(st[1])
	pm, ok := procStat(postmaster)
	if !ok {
		return 0
	}
	ticks := statTicks(pm, 11, 12, 13, 14) // its own time and its reaped children's
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(dir))
		if st, ok := procStat(pid); ok && st[1] == strconv.Itoa(postmaster) {
			ticks += statTicks(st, 11, 12)
		}
	}
	return time.Duration(ticks) * clockTick
}

// procStat returns the fields of /proc/pid/stat after the command name:
// [0] is the state, [1] the parent pid, [11] and [12] user and system time.
func procStat(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, false
	}
	f := strings.Fields(string(b[i+1:]))
	return f, len(f) > 14
}

func statTicks(f []string, idx ...int) int64 {
	var n int64
	for _, i := range idx {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		n += v
	}
	return n
}
