package peers

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"
)

// Reading is one engine's median cost on one cell.
type Reading struct {
	NsPerOp     float64
	AllocsPerOp float64
}

// Cell is one policy size and call shape, with each engine's reading in
// the order of Compiled.Engines.
type Cell struct {
	Size     int
	Shape    string
	Readings []Reading
}

// Measure times every shape on every engine in interleaved rounds: each
// round runs every shape on toolgate, Cedar and OPA in turn, for about
// target each, so that a noisy moment of a shared machine falls on one
// round of all engines rather than on one engine. The reading of a cell is
// the median over rounds.
func Measure(size int, c *Compiled, shapes []Shape, rounds int, target time.Duration) []Cell {
	type runner struct {
		decide func()
		iters  int
	}
	runs := make([][]runner, len(shapes))
	for i, s := range shapes {
		for _, e := range c.Engines {
			f := e.Bind(s.Call)
			decide := func() { f() }
			runs[i] = append(runs[i], runner{decide, calibrate(decide, target)})
		}
	}
	ns := make([][][]float64, len(shapes))
	allocs := make([][][]float64, len(shapes))
	for i := range shapes {
		ns[i] = make([][]float64, len(c.Engines))
		allocs[i] = make([][]float64, len(c.Engines))
	}
	for round := range rounds {
		for i := range shapes {
			for k := range runs[i] {
				// Each round starts the cell with the next engine, so
				// that the garbage one engine leaves is collected
				// during each of the others' runs as often.
				j := (round + k) % len(runs[i])
				t, a := timeRun(runs[i][j].decide, runs[i][j].iters)
				ns[i][j] = append(ns[i][j], t)
				allocs[i][j] = append(allocs[i][j], a)
			}
		}
	}
	cells := make([]Cell, len(shapes))
	for i, s := range shapes {
		cells[i] = Cell{Size: size, Shape: s.Name}
		for j := range c.Engines {
			cells[i].Readings = append(cells[i].Readings, Reading{median(ns[i][j]), median(allocs[i][j])})
		}
	}
	return cells
}

// calibrate finds how many decisions take about target.
func calibrate(decide func(), target time.Duration) int {
	n := 1
	for {
		start := time.Now()
		for range n {
			decide()
		}
		if d := time.Since(start); d >= target/4 || n >= 1<<24 {
			return max(1, int(float64(n)*float64(target)/float64(max(d, 1))))
		}
		n *= 4
	}
}

// timeRun runs decide iters times: ns and allocations per decision.
func timeRun(decide func(), iters int) (float64, float64) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	for range iters {
		decide()
	}
	d := time.Since(start)
	runtime.ReadMemStats(&after)
	return float64(d.Nanoseconds()) / float64(iters), float64(after.Mallocs-before.Mallocs) / float64(iters)
}

// median is the middle of v (the mean of the two middle values when even).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// opaGoal is the goal against OPA: toolgate at most 1/20 of its time (and
// at most Cedar's time).
const opaGoal = 20.0

// WriteTable writes the cells as a markdown table: each engine's median
// ns/op (allocs/op), the ratios toolgate/Cedar and toolgate/OPA, and
// whether the cell meets the goal. It assumes the engine order of Compile.
func WriteTable(w io.Writer, cells []Cell) {
	fmt.Fprintln(w, "| rules | shape | toolgate ns (allocs) | Cedar ns (allocs) | OPA ns (allocs) | toolgate/Cedar | toolgate/OPA | goal |")
	fmt.Fprintln(w, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, c := range cells {
		tg, cd, op := c.Readings[0], c.Readings[1], c.Readings[2]
		rc, ro := tg.NsPerOp/cd.NsPerOp, tg.NsPerOp/op.NsPerOp
		goal := "met"
		if rc > 1 || ro > 1/opaGoal {
			goal = "**not met**"
		}
		fmt.Fprintf(w, "| %s | %s | %s (%s) | %s (%s) | %s (%s) | %.2f | 1/%.0f | %s |\n", thousands(c.Size), c.Shape,
			thousands(int(tg.NsPerOp+0.5)), allocText(tg.AllocsPerOp), thousands(int(cd.NsPerOp+0.5)), allocText(cd.AllocsPerOp),
			thousands(int(op.NsPerOp+0.5)), allocText(op.AllocsPerOp), rc, 1/ro, goal)
	}
}

// allocText writes allocations per decision: one decimal below 10.
func allocText(a float64) string {
	if a < 10 {
		return fmt.Sprintf("%.1f", a)
	}
	return fmt.Sprintf("%.0f", a)
}

// thousands writes n with comma separators: 12,345.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
