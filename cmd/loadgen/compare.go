package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
)

// compare runs c.rounds rounds of GET c.against then the mix, each for
// c.dur on the same connections and transport, and prints each round's
// throughputs, the server's CPU per request when -pid is given, and the
// ratio of the mix's throughput to the GETs'; then the ratios' median,
// least and greatest. The two runs of a round are back to back, so that
// the machine's other load, which moves single runs by tens of percent on
// a shared machine, moves both alike.
func compare(w io.Writer, c config) error {
	if c.get != "" || c.batch > 0 {
		return errors.New("-against compares single evaluate calls: it takes no -get or -batch")
	}
	if c.rounds < 1 {
		return fmt.Errorf("-rounds must be positive, got %d", c.rounds)
	}
	ref := c
	ref.get = c.against
	ratios := make([]float64, 0, c.rounds)
	for round := 1; round <= c.rounds; round++ {
		base, err := measure(ref)
		if err != nil {
			return err
		}
		m, err := measure(c)
		if err != nil {
			return err
		}
		if failed := base.res.failures + m.res.failures; failed > 0 {
			return fmt.Errorf("round %d: %d requests failed", round, failed)
		}
		if base.res.requests == 0 || m.res.requests == 0 {
			return fmt.Errorf("round %d: no request was answered", round)
		}
		ratio := m.perSecond() / base.perSecond()
		ratios = append(ratios, ratio)
		fmt.Fprintf(w, "round %d: GET %s %.0f requests/s%s, mix %s %.0f requests/s%s, ratio %.2f\n", round,
			c.against, base.perSecond(), cpuNote(base), c.mix, m.perSecond(), cpuNote(m), ratio)
	}
	slices.Sort(ratios)
	fmt.Fprintf(w, "ratio over %d rounds (mix %s, %d connections): median %.2f, least %.2f, greatest %.2f\n",
		len(ratios), c.mix, c.conns, median(ratios), ratios[0], ratios[len(ratios)-1])
	return nil
}

// cpuNote is " (N µs of server CPU each)", or "" without the server's CPU.
func cpuNote(m measurement) string {
	if per := m.serverCPUPerRequest(); per > 0 {
		return fmt.Sprintf(" (%d µs of server CPU each)", per.Microseconds())
	}
	return ""
}

// median is the middle of sorted values (the mean of the two middle ones
// for an even count).
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
