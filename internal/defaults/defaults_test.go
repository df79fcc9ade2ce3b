package defaults

import (
	"testing"
	"time"
)

func TestPositive(t *testing.T) {
	for _, c := range []struct {
		note      string
		v, d, got time.Duration
	}{
		{note: "unset takes the default", v: 0, d: time.Second, got: time.Second},
		{note: "below zero takes the default", v: -time.Minute, d: time.Second, got: time.Second},
		{note: "set is kept", v: time.Minute, d: time.Second, got: time.Minute},
	} {
		v := c.v
		Positive(&v, c.d)
		if v != c.got {
			t.Errorf("%s: Positive(%v, %v) = %v, want %v", c.note, c.v, c.d, v, c.got)
		}
	}
}
