package shell

// analysisState is everything one analysis needs, made in one allocation:
// the result, the root walker with its expander and variables, and the
// first backing arrays of the result's lists. It is never pooled nor
// reused: the result's lists refer into it and live as long as the
// caller keeps the result, so nothing of one call can reach another.
type analysisState struct {
	a    Analysis
	w    walker
	x    expander
	vars shellVars
	slab analysisSlab
}

// analysisSlab holds the first backing arrays of one Analysis's lists.
// Each array is handed out once (an Analysis's list grows from it, and
// past its size append copies it out); fields are carved in turn.
type analysisSlab struct {
	cmds   [initialCommands][]string
	norms  [initialCommands]string
	argv   [initialCommands][]string
	paths  [initialPaths]string
	fields [initialFields]string
	// used counts the fields carved; listsTaken and pathsTaken are set
	// once the lists' arrays are handed out.
	used                  int
	cmdsTaken, normsTaken bool
	pathsTaken            bool
}

const (
	// initialPaths is how many path words the slab holds.
	initialPaths = 4
	// initialFields is how many words of simple commands the slab holds.
	initialFields = 32
)

// newAnalysisState makes the state of one analysis whose root walker is
// at depth.
func newAnalysisState(env Env, depth int) *analysisState {
	st := &analysisState{}
	st.vars.env = env
	st.x.init(&st.vars)
	st.w = walker{a: &st.a, vars: &st.vars, x: &st.x, depth: depth, slab: &st.slab}
	return st
}

// fieldList is an empty list with room for n words: carved from the slab
// while it has room (its capacity is capped at n, so appending past it
// copies the list out rather than writing into the next carve).
func (s *analysisSlab) fieldList(n int) []string {
	if s == nil || n > len(s.fields)-s.used {
		return make([]string, 0, n)
	}
	l := s.fields[s.used : s.used : s.used+n]
	s.used += n
	return l
}

// commandList is the first array of Analysis.Commands.
func (s *analysisSlab) commandList() [][]string {
	if s == nil || s.cmdsTaken {
		return make([][]string, 0, initialCommands)
	}
	s.cmdsTaken = true
	return s.cmds[:0]
}

// normalizedLists are the first arrays of Analysis.Normalized and Argv.
func (s *analysisSlab) normalizedLists() ([]string, [][]string) {
	if s == nil || s.normsTaken {
		return make([]string, 0, initialCommands), make([][]string, 0, initialCommands)
	}
	s.normsTaken = true
	return s.norms[:0], s.argv[:0]
}

// pathList is the first array of Analysis.Paths.
func (s *analysisSlab) pathList() []string {
	if s == nil || s.pathsTaken {
		return nil
	}
	s.pathsTaken = true
	return s.paths[:0]
}
