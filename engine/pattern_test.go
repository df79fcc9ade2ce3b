package engine

import (
	"strings"
	"testing"
	"time"
)

// TestGlobLongPathIsLinear: a path of 1 MiB with a slash every other byte
// is matched against a path glob quickly (trying each parent from scratch
// would be quadratic and take minutes).
func TestGlobLongPathIsLinear(t *testing.T) {
	m := compileGlob("**/.ssh/**")
	v := strings.Repeat("a/", 1<<19)
	start := time.Now()
	if m.matchPath(v) {
		t.Fatal("matched a path without .ssh")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("1 MiB path took %v", d)
	}
}
