package engine

import (
	"strings"

	"github.com/toolgate/toolgate/engine/shell"
	"github.com/toolgate/toolgate/policy"
)

// levelWords are the levels' wire names (policy.Level.String), read once
// at start, which a trace step shows for the level it produced.
var levelWords = func() (w [policy.Deny + 1]string) {
	for l := range w {
		w[l] = policy.Level(l).String()
	}
	return w
}()

// tracer records the steps of one evaluation for explain. A nil tracer
// records nothing, so evaluation without explain pays only a nil check.
type tracer struct {
	list    []Step
	decided int // index of the decisive step, -1 for none yet
	set     bool
}

func (t *tracer) add(s Step) {
	if t == nil {
		return
	}
	t.list = append(t.list, s)
	if s.Decisive {
		t.decided, t.set = len(t.list)-1, true
	}
}

// decide marks the last step as decisive.
func (t *tracer) decide() {
	if t == nil || len(t.list) == 0 {
		return
	}
	t.decided, t.set = len(t.list)-1, true
}

// decideRule marks the last step naming rule as decisive.
func (t *tracer) decideRule(rule string) {
	if t == nil {
		return
	}
	for i := len(t.list) - 1; i >= 0; i-- {
		if t.list[i].Rule == rule {
			t.decided, t.set = i, true
			return
		}
	}
}

// hits records the rules that matched at a step.
func (t *tracer) hits(name string, hits []*rule) {
	if t == nil {
		return
	}
	s := Step{Name: name}
	for _, h := range hits {
		s.Hits = append(s.Hits, h.name+"="+levelWords[h.level])
	}
	if len(hits) == 0 {
		s.Detail = "no rule matched"
	}
	t.add(s)
}

// shell records what the shell analysis found; unknown parts show as
// <unknown>.
func (t *tracer) shell(a *shell.Analysis) {
	if t == nil {
		return
	}
	s := Step{Name: "shell"}
	for _, c := range a.Commands {
		s.Hits = append(s.Hits, showUnknown(strings.Join(c, " ")))
	}
	if !a.Parsed {
		s.Detail = "the command does not parse"
	} else {
		s.Detail = "simple commands found"
	}
	if len(a.Normalized) > 0 {
		s.Detail += "; normalized: " + showUnknown(strings.Join(a.Normalized, " | "))
	}
	if len(a.Paths) > 0 {
		s.Detail += "; paths: " + showUnknown(strings.Join(a.Paths, " "))
	}
	if a.UnknownCommand {
		s.Detail += "; a command name is not known statically"
	}
	if a.TooDeep {
		s.Detail += "; script text nested too deep to read"
	}
	t.add(s)
}

// showUnknown writes shell.UnknownMark as <unknown> for people.
func showUnknown(s string) string {
	if !shell.HasUnknown(s) {
		return s
	}
	return unknownWords.Replace(s)
}

// unknownWords shows unread input and other unknown parts in words.
var unknownWords = strings.NewReplacer(shell.InputMark, "<unread input>", shell.UnknownMark, "<unknown>")

func (t *tracer) steps() []Step {
	if t == nil {
		return nil
	}
	return t.list
}

// finish returns the steps with exactly one marked decisive.
func (t *tracer) finish() []Step {
	if t == nil {
		return nil
	}
	for i := range t.list {
		t.list[i].Decisive = t.set && i == t.decided
	}
	return t.list
}
