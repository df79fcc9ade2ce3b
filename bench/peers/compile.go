package peers

import (
	"fmt"
	"time"

	"github.com/toolgate/toolgate/engine"
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
// expected one, or where toolgate's level is set by another cause than the
// shape names, so that no timing measures a different answer or path.
func (c *Compiled) Check(shapes []Shape) error {
	for _, s := range shapes {
		if tg, ok := c.Engines[0].(toolgateEngine); ok {
			d := tg.e.Evaluate(&engine.Request{Call: engine.NewCall(s.Call.Tool, s.Call.Args)})
			if d.Cause != s.Cause {
				return fmt.Errorf("toolgate decides %s by %s (%s), want by %s", s.Name, d.Cause, d.MatchedRule, s.Cause)
			}
		}
		for _, e := range c.Engines {
			if got := e.Bind(s.Call)(); got != s.Want {
				return fmt.Errorf("%s decides %s as %s, want %s", e.Name(), s.Name, got, s.Want)
			}
		}
	}
	return nil
}
