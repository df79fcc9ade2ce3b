package prefilter

import (
	"slices"
	"sort"
)

// Machine is an Aho-Corasick automaton over folded bytes (foldTable): one
// pass over a value reports every key it contains. States are stored in
// flat arrays (edges in CSR form, sorted by byte) so that a policy of
// 100,000 rules costs a few arrays rather than millions of small objects;
// the root's transitions are a dense table because most bytes of a benign
// value are read there.
type Machine struct {
	root      [256]int32
	edgeStart []int32 // edges of state s: edgeStart[s] : edgeStart[s+1]
	edgeByte  []byte
	edgeNext  []int32
	fail      []int32
	out       []int32 // key id ending at the state, or -1
	dict      []int32 // next state on the fail chain with out >= 0, or -1
	// dense is the whole transition table when it is small (densify):
	// dense[s*classes+classOf[c]], one load per byte instead of a search
	// along the fail chain.
	dense   []int32
	classes int32
	classOf [256]uint8
	// dense16 is dense in 16 bits, for an automaton of fewer than 32,768
	// states (the built-in rules' has about 4,000): half the memory, and
	// the top bit marks a state where a key ends (out or dict), so the
	// common byte costs one load.
	dense16 []uint16
}

// reportBit marks a dense16 entry whose state ends a key.
const reportBit = 1 << 15

// maxDense bounds the entries of a dense transition table (4 MB): the
// built-in rules' automaton and a few thousand user rules' fit; a larger
// policy keeps the compact arrays alone.
const maxDense = 1 << 20

// NewMachine builds the automaton of keys (distinct, non-empty, already
// folded); key i is reported as i.
func NewMachine(keys []string) *Machine {
	order := make([]int32, len(keys))
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(a, b int) bool { return keys[order[a]] < keys[order[b]] })

	// Build the trie from sorted keys: a key shares its longest common
	// prefix with the previous key's path, so children are created in
	// increasing byte order and the trie needs no per-node maps.
	parent := []int32{-1}
	via := []byte{0}
	out := []int32{-1}
	path := []int32{0}
	prev := ""
	for _, id := range order {
		k := keys[id]
		l := 0
		for l < len(k) && l < len(prev) && k[l] == prev[l] {
			l++
		}
		path = path[:l+1]
		node := path[l]
		for i := l; i < len(k); i++ {
			parent = append(parent, node)
			via = append(via, k[i])
			out = append(out, -1)
			node = int32(len(parent) - 1)
			path = append(path, node)
		}
		out[node] = id
		prev = k
	}
	n := len(parent)
	m := &Machine{out: out, fail: make([]int32, n), dict: make([]int32, n), edgeStart: make([]int32, n+1)}
	for s := 1; s < n; s++ {
		m.edgeStart[parent[s]+1]++
	}
	for s := 1; s <= n; s++ {
		m.edgeStart[s] += m.edgeStart[s-1]
	}
	m.edgeByte = make([]byte, n-1)
	m.edgeNext = make([]int32, n-1)
	fill := slices.Clone(m.edgeStart[:n])
	for s := 1; s < n; s++ {
		p := parent[s]
		m.edgeByte[fill[p]] = via[s]
		m.edgeNext[fill[p]] = int32(s)
		fill[p]++
	}
	m.link()
	m.densify()
	return m
}

// densify builds the dense transition table when it fits maxDense. Bytes
// are grouped in classes: every byte that is in no key is class 0 (it
// leads back to the root from any state), every other folded byte is a
// class of its own, and classOf applies foldTable too.
func (m *Machine) densify() { m.densifyAs(len(m.out) >= reportBit) }

// densifyAs builds the dense table in 32 bits (wide) or 16.
func (m *Machine) densifyAs(wide bool) {
	var class [256]uint8
	var reps []byte
	for _, c := range m.edgeByte {
		if class[c] == 0 {
			if len(reps) == 255 {
				return
			}
			reps = append(reps, c)
			class[c] = uint8(len(reps))
		}
	}
	classes := len(reps) + 1
	states := len(m.out)
	if states*classes > maxDense {
		return
	}
	// Rows are filled breadth-first, so a state's failure state (which is
	// shallower) has its row already: a byte with no trie edge moves as it
	// does from there. Walking the failure chain for every state and byte
	// instead cost time quadratic in a key's length for a periodic key
	// (") && (" a thousand times took seconds to compile).
	order := m.breadthFirst()
	if wide {
		m.dense = fillDense(m, order, reps, make([]int32, states*classes), func(next int32) int32 { return next })
	} else {
		m.dense16 = fillDense(m, order, reps, make([]uint16, states*classes), func(next int32) uint16 {
			if m.out[next] >= 0 || m.dict[next] >= 0 {
				return uint16(next) | reportBit
			}
			return uint16(next)
		})
	}
	m.classes = int32(classes)
	for c := range 256 {
		m.classOf[c] = class[foldTable[c]]
	}
}

// fillDense fills table (one row of len(reps)+1 entries a state) in order,
// breadth-first: a state's move on a byte with no trie edge is its
// failure state's, read from that row. entry writes a next state as the
// table holds it. Column 0 stays 0: a byte in no key leads to the root.
func fillDense[T uint16 | int32](m *Machine, order []int32, reps []byte, table []T, entry func(next int32) T) []T {
	classes := len(reps) + 1
	for _, st := range order {
		row := table[int(st)*classes : (int(st)+1)*classes]
		failRow := table[int(m.fail[st])*classes:]
		for k, c := range reps {
			switch next := m.child(st, c); {
			case next >= 0:
				row[k+1] = entry(next)
			case st == 0:
				row[k+1] = entry(m.root[c])
			default:
				row[k+1] = failRow[k+1] // the same state, as this table holds it
			}
		}
	}
	return table
}

// breadthFirst lists the states from the root down, each before its
// children.
func (m *Machine) breadthFirst() []int32 {
	order := make([]int32, 1, len(m.out))
	for i := 0; i < len(order); i++ {
		s := order[i]
		order = append(order, m.edgeNext[m.edgeStart[s]:m.edgeStart[s+1]]...)
	}
	return order
}

// child returns the trie child of s on byte c, or -1.
func (m *Machine) child(s int32, c byte) int32 {
	lo, hi := m.edgeStart[s], m.edgeStart[s+1]
	for lo < hi {
		mid := int32(uint32(lo+hi) >> 1)
		switch b := m.edgeByte[mid]; {
		case b == c:
			return m.edgeNext[mid]
		case b < c:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return -1
}

// step is the automaton's transition from s on byte c.
func (m *Machine) step(s int32, c byte) int32 {
	for s != 0 {
		if t := m.child(s, c); t >= 0 {
			return t
		}
		s = m.fail[s]
	}
	return m.root[c]
}

// link computes the root table, fail and dictionary links breadth-first.
func (m *Machine) link() {
	for c := range 256 {
		m.root[c] = 0
	}
	queue := make([]int32, 0, len(m.fail))
	for e := m.edgeStart[0]; e < m.edgeStart[1]; e++ {
		t := m.edgeNext[e]
		m.root[m.edgeByte[e]] = t
		m.fail[t] = 0
		m.dict[t] = -1
		queue = append(queue, t)
	}
	m.dict[0] = -1
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for e := m.edgeStart[s]; e < m.edgeStart[s+1]; e++ {
			t, c := m.edgeNext[e], m.edgeByte[e]
			f := m.step(m.fail[s], c)
			m.fail[t] = f
			if m.out[f] >= 0 {
				m.dict[t] = f
			} else {
				m.dict[t] = m.dict[f]
			}
			queue = append(queue, t)
		}
	}
}

// Scan feeds the folded bytes of v through the automaton and appends to
// ids the id of every key it contains that ids does not hold yet.
func (m *Machine) Scan(v string, ids []int32) []int32 {
	if m.dense16 != nil {
		return m.scanDense16(v, ids)
	}
	if m.dense != nil {
		return m.scanDense(v, ids)
	}
	var s int32
	for i := 0; i < len(v); i++ {
		s = m.step(s, foldTable[v[i]])
		if m.out[s] >= 0 {
			ids = addKey(ids, m.out[s])
		}
		for d := m.dict[s]; d >= 0; d = m.dict[d] {
			ids = addKey(ids, m.out[d])
		}
	}
	return ids
}

// scanDense16 is scan over the 16-bit dense table.
func (m *Machine) scanDense16(v string, ids []int32) []int32 {
	var s int32
	for i := 0; i < len(v); i++ {
		e := m.dense16[s*m.classes+int32(m.classOf[v[i]])]
		s = int32(e &^ reportBit)
		if e&reportBit == 0 {
			continue
		}
		if m.out[s] >= 0 {
			ids = addKey(ids, m.out[s])
		}
		for d := m.dict[s]; d >= 0; d = m.dict[d] {
			ids = addKey(ids, m.out[d])
		}
	}
	return ids
}

// scanDense is scan over the dense table.
func (m *Machine) scanDense(v string, ids []int32) []int32 {
	var s int32
	for i := 0; i < len(v); i++ {
		s = m.dense[s*m.classes+int32(m.classOf[v[i]])]
		if m.out[s] >= 0 {
			ids = addKey(ids, m.out[s])
		}
		for d := m.dict[s]; d >= 0; d = m.dict[d] {
			ids = addKey(ids, m.out[d])
		}
	}
	return ids
}

// addKey appends id unless ids holds it; the newest ids are checked first
// because a key found again is usually one found just before.
func addKey(ids []int32, id int32) []int32 {
	for i := len(ids) - 1; i >= 0; i-- {
		if ids[i] == id {
			return ids
		}
	}
	return append(ids, id)
}
