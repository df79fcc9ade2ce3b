package peers

import (
	"fmt"
	"time"
)

// Compile compiles rules for toolgate, Cedar and OPA, in that order, timing
// each compile.
func Compile(rules []Rule) (*Compiled, error) {
	c := &Compiled{}
	for _, build := range []func([]Rule) (Engine, error){NewToolgate, NewCedar, NewOPA} {
		start := time.Now()
		e, err := build(rules)
		if err != nil {
			return nil, err
		}
		c.Compile = append(c.Compile, time.Since(start).Seconds())
		c.Engines = append(c.Engines, e)
	}
	return c, nil
}

// Check fails on the first engine and shape whose decision is not the
// expected one, so that no timing measures a different answer.
func (c *Compiled) Check(shapes []Shape) error {
	for _, s := range shapes {
		for _, e := range c.Engines {
			if got := e.Bind(s.Call)(); got != s.Want {
				return fmt.Errorf("%s decides %s as %s, want %s", e.Name(), s.Name, got, s.Want)
			}
		}
	}
	return nil
}
