package main

import (
	"io"
	"runtime/debug"
	"testing"
)

// TestGCPercent: -gc-percent defaults to 400 and is applied, unless GOGC is
// set in the environment, which then wins.
func TestGCPercent(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)

	c, err := parseFlags([]string{"-workspace", t.TempDir()}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.gcPercent != 400 {
		t.Fatalf("default -gc-percent: got %d, want 400", c.gcPercent)
	}
	applyGCPercent(c, func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != 400 {
		t.Errorf("without GOGC: GC percent %d, want 400", got)
	}
	applyGCPercent(c, func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set: GC percent %d, want it left at 100", got)
	}
}
