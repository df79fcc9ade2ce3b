package main

import (
	"flag"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/toolgate/toolgate/inforce"
)

// memoryConfig is the flag that bounds the heap of a large policy.
type memoryConfig struct {
	// headroomMB is the most the heap may grow beyond the live heap before
	// a collection, in MiB; 0 leaves -gc-percent alone.
	headroomMB int
}

func (m *memoryConfig) register(fs *flag.FlagSet) {
	fs.IntVar(&m.headroomMB, "heap-headroom-mb", defaultHeadroomMB, "the most the heap may grow beyond the live heap before a collection, in MiB: with a large policy the collector runs sooner than -gc-percent says, so the resident size stays near the live heap plus this (0: only -gc-percent)")
}

// defaultHeadroomMB keeps a server with 100,000 rules (about 150 MB live)
// near 300 MB resident under requests (BENCHMARKS.md: 318-322 MB,
// 347-371 MB at 128), while a usual policy (a few MB live) keeps the full
// -gc-percent: 400% of 5 MB is far below 64 MiB.
const defaultHeadroomMB = 64

// minGCPercent is the lowest target the headroom sets: with a live heap
// far beyond the headroom a lower one would collect nearly all the time.
const minGCPercent = 25

// gcPercentFor is the collector's target for a live heap: maxPercent,
// lowered so that the heap grows by at most headroom bytes, but not below
// minGCPercent (nor above maxPercent when that is lower).
func gcPercentFor(live, headroom uint64, maxPercent int) int {
	if headroom == 0 || live == 0 || maxPercent <= 0 {
		return maxPercent
	}
	p := headroom * 100 / live
	if p >= uint64(maxPercent) {
		return maxPercent
	}
	return max(int(p), min(minGCPercent, maxPercent))
}

// memoryTuner runs after the policy is loaded and after every swap, on its
// own goroutine (a swap's notification runs on the goroutine that made the
// change, often a request). Loading a policy allocates far more than it
// keeps (yaml.v3's node tree is about 2.5 KB per rule, and a reload holds
// the old engine until the swap), and the runtime would keep those pages
// for the heap it targets next; one forced collection that returns them
// costs about as much as marking the live heap once, and policies change
// at a person's pace. It then sets the collector's target for the new
// live heap (gcPercentFor).
type memoryTuner struct {
	headroom   uint64
	maxPercent int
	// setPercent is false when GOGC is set in the environment, which wins.
	setPercent bool
	log        *slog.Logger
	kick       chan struct{}
}

// wireMemory applies -gc-percent and starts the tuner for the policy
// store: once now, after the first load, and after every swap; it stops
// with the server. It runs after the store has opened, so the first load
// runs at the runtime's default target: at 400% a large policy's load grew
// the heap to five times what it parsed, and faulting those pages in was a
// quarter of the start time at 100,000 rules.
func wireMemory(c config, st *inforce.Holder, a *app, log *slog.Logger) {
	applyGCPercent(c, os.Getenv)
	done := make(chan struct{})
	t := startMemoryTuner(c, os.Getenv, log, done)
	st.OnChange(t.Kick)
	a.onStop(func() { close(done) })
}

// tuneDelay is how long the tuner waits after a kick.
const tuneDelay = 500 * time.Millisecond

// startMemoryTuner tunes once now and then after each kick, until done closes.
func startMemoryTuner(c config, getenv func(string) string, log *slog.Logger, done <-chan struct{}) *memoryTuner {
	t := &memoryTuner{
		headroom:   uint64(max(c.memory.headroomMB, 0)) << 20,
		maxPercent: c.gcPercent,
		setPercent: getenv("GOGC") == "",
		log:        log,
		kick:       make(chan struct{}, 1),
	}
	t.Kick()
	go func() {
		idle := time.NewTicker(idleCheckEvery)
		defer idle.Stop()
		for {
			select {
			case <-done:
				return
			case <-idle.C:
				// After a burst (a flood of large asks, a big batch) the
				// heap holds garbage no collection has swept (with a high
				// -gc-percent none may come while the server is quiet) and
				// pages it no longer uses: collect and give them back when
				// they exceed twice the headroom.
				if idleHeap() > 2*max(t.headroom, 32<<20) {
					t.tune()
				}
			case <-t.kick:
				// Let the swap's other subscribers (the hub reads the
				// section) finish, so their garbage is collected too.
				select {
				case <-done:
					return
				case <-time.After(tuneDelay):
				}
				t.tune()
			}
		}
	}()
	return t
}

// Kick asks for a tune after a policy swap; kicks while one is pending
// coalesce. It never blocks.
func (t *memoryTuner) Kick() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

func (t *memoryTuner) tune() {
	// The first collection moves sync.Pool caches to their victim caches
	// (encoding/json keeps the ETag's 10-20 MB buffer there at 100,000
	// rules); the one FreeOSMemory runs drops them.
	runtime.GC()
	debug.FreeOSMemory()
	live := liveHeap()
	if !t.setPercent {
		return
	}
	p := gcPercentFor(live, t.headroom, t.maxPercent)
	if old := debug.SetGCPercent(p); old != p {
		t.log.Debug("collector target set for the live heap", "live_mb", live>>20, "gc_percent", p)
	}
}

// idleCheckEvery is how often the tuner looks for heap to give back.
const idleCheckEvery = 10 * time.Second

// idleHeap is the heap memory the process holds beyond what the last
// collection found live: objects that may be garbage, free spans and the
// unused part of spans, none of it given back to the system yet.
func idleHeap() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	var n uint64
	for _, x := range s {
		if x.Value.Kind() == metrics.KindUint64 {
			n += x.Value.Uint64()
		}
	}
	if live := liveHeap(); n > live {
		return n - live
	}
	return 0
}

// liveHeap is the heap the last collection marked live, in bytes.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
