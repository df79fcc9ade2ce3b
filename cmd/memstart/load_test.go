package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/toolgate/toolgate/inforce"
)

// heapProfile is where BenchmarkStoreOpen writes the heap profile taken
// while the opened store is live (the -memprofile of go test is taken at the
// end, when the store is closed and collected).
var heapProfile = flag.String("heap", "", "write the live heap after store.Open to this file")

// BenchmarkStoreOpen is the in-process part of what memstart measures: the
// store loading a config dir of n rules (decode, compile, watch), with the
// heap it keeps (MB-live). Profile it with
//
//	go test ./cmd/memstart -run '^$' -bench StoreOpen/rules=100000 -benchtime 1x -memprofile mem.out -cpuprofile cpu.out
func BenchmarkStoreOpen(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprintf("rules=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			if err := writeFile(filepath.Join(dir, "config.yaml"), n, "deny"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var live float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s, err := inforce.Open(dir, inforce.Options{Workspace: dir})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				live = float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
				writeHeap(b)
				if got := len(s.Problems()); got != 0 {
					b.Fatalf("%d problems: %v", got, s.Problems()[0])
				}
				s.Close()
			}
			b.ReportMetric(live, "MB-live")
		})
	}
}

func writeHeap(b *testing.B) {
	if *heapProfile == "" {
		return
	}
	f, err := os.Create(*heapProfile)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
