package main

import (
	"io"
	"testing"
)

// TestGCPercentFor: the headroom lowers the collector's target only when
// the live heap is large, never below minGCPercent or above -gc-percent.
func TestGCPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		note           string
		live, headroom uint64
		max, want      int
	}{
		{"a usual policy keeps -gc-percent", 5 * mb, 128 * mb, 400, 400},
		{"exactly at the headroom", 32 * mb, 128 * mb, 400, 400},
		{"100,000 rules: heap grows by the headroom", 128 * mb, 128 * mb, 400, 100},
		{"larger still", 256 * mb, 128 * mb, 400, 50},
		{"huge live heap: the floor", 2048 * mb, 128 * mb, 400, minGCPercent},
		{"headroom 0: -gc-percent alone", 1024 * mb, 0, 400, 400},
		{"no reading yet", 0, 128 * mb, 400, 400},
		{"-gc-percent below the floor wins", 2048 * mb, 128 * mb, 10, 10},
		{"-gc-percent off (-1) stays off", 2048 * mb, 128 * mb, -1, -1},
	} {
		if got := gcPercentFor(c.live, c.headroom, c.max); got != c.want {
			t.Errorf("%s: gcPercentFor(%d MB, %d MB, %d) = %d, want %d", c.note, c.live/mb, c.headroom/mb, c.max, got, c.want)
		}
	}
}

// TestHeapHeadroomFlag: -heap-headroom-mb defaults to 128 and parses.
func TestHeapHeadroomFlag(t *testing.T) {
	c, err := parseFlags([]string{"-workspace", t.TempDir()}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.memory.headroomMB != defaultHeadroomMB {
		t.Errorf("default: got %d, want %d", c.memory.headroomMB, defaultHeadroomMB)
	}
	c, err = parseFlags([]string{"-workspace", t.TempDir(), "-heap-headroom-mb", "0"}, io.Discard)
	if err != nil || c.memory.headroomMB != 0 {
		t.Errorf("-heap-headroom-mb 0: got %d, %v", c.memory.headroomMB, err)
	}
}
