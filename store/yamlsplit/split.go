// Package yamlsplit reads the `permissions` section of a large
// config.yaml on all cores: its long block lists (rules,
// approval_overrides) are cut at their entries' dash lines and read in
// pieces, and the rest of the file is parsed by yaml.v3 beside them. At
// 100,000 rules that is ~10x faster than one yaml.v3 parse of the whole
// file and leaves ~4.5x less garbage, which is what keeps the server's
// start under 2 s (BENCHMARKS.md#the-yaml-fast-path-in-its-own-package).
//
// It owns Decode only: deciding whether a text provably reads as one
// yaml.v3 parse of the whole file, and reading it so when it does. It does
// not own errors (a text it does not take, well-formed or not, is refused
// with ok false, and the caller parses the whole file, which gives every
// error its usual text), the node tree the comment-preserving edits work
// on, or what a decoded value means: the caller's Finish normalizes it.
package yamlsplit

import (
	"bytes"
	"runtime"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/internal/strarena"
)

// Options are what Decode needs of its caller.
type Options struct {
	// Finish turns a value yaml.v3 decoded (an entry it parsed, and the
	// section with each long list cut to nothing) into the caller's form;
	// nil keeps yaml.v3's. Entries simpleEntry reads are already in that
	// form: maps with string keys, lists, strings. Finish runs on several
	// goroutines at once.
	Finish func(any) any
}

// Decode returns config.yaml's `permissions` mapping as the caller's
// decode of one yaml.v3 parse of the whole of raw would (a yaml.v3 decode
// into any, then Finish), or ok false when it cannot show that it reads
// raw alike: then the caller parses the whole file.
//
// Why its pieces mean what they mean in the whole file (yaml.v3 parses a
// file on one goroutine and builds its whole node tree first):
//
// It only answers when it can show that the pieces mean what they mean in
// the whole file; anything else (ok false) goes to the whole-file parse,
// which also gives every error its usual text. What it checks, and why
// that is enough:
//
//   - The file reads alike wherever a parse starts: UTF-8 of characters
//     yaml.v3's reader takes, without U+FEFF (readAlike), without a line
//     break other than "\n" (so lines here are lines there), without a
//     document marker after the permissions key (yaml.v3 reads a varying
//     amount past the end of the document it decodes), without a
//     directive (%TAG changes tags in the whole file only) and without a
//     line long enough to nest near yaml.v3's depth limit.
//   - No tab comes before a line's first character, and the
//     `permissions:` key is a plain key alone on a line at column 0, with
//     a block mapping under it whose keys are all plain strings.
//   - A list region starts at the first dash line after a key line of
//     that mapping and runs over lines indented deeper than the dash,
//     dash lines at the dash's column ("- " and more on the line), blank
//     lines and comment lines; it must end at a line no deeper than the
//     mapping's keys (or at the end of the file).
//   - Every piece parses alone as a block sequence at the dash's column
//     whose entries start exactly on the piece's dash lines, with no
//     alias. A piece that ends inside a quoted scalar or a flow collection
//     does not parse; block and plain scalars end at the next dash line
//     in both readings, since they end at the first line not indented
//     deeper than the block they are in.
//   - The skeleton parses, and in it the key's value is a sequence whose
//     only entry starts on the first dash line. So the prefix reads the
//     same in both, the dash lines really start entries, and the suffix
//     follows a finished list.
//
// FuzzDecode holds the result to the whole-file decode.
func Decode(raw []byte, opt Options) (m map[string]any, ok bool) {
	defer refuseOnPanic(&ok)
	finish := opt.Finish
	if finish == nil {
		finish = func(v any) any { return v }
	}
	return defaultSplit.decode(raw, runtime.GOMAXPROCS(0), finish)
}

// refuseOnPanic turns a panic of the split decode into a refusal: a bug
// in it must cost the whole-file parse, not the server (a load runs at
// start and on every edit).
func refuseOnPanic(ok *bool) {
	if !splitRecovers {
		return
	}
	if recover() != nil {
		*ok = false
	}
}

// splitRecovers is false in this package's tests, so that a panic of the
// split decode fails them (and the fuzzers find it) instead of passing as
// a refusal.
var splitRecovers = true

// decodeSafely is decode with a panic as a refusal.
func (pc *listPiece) decodeSafely(lines [][]byte, dashCol int, finish func(any) any) (ok bool) {
	defer refuseOnPanic(&ok)
	return pc.decode(lines, dashCol, finish)
}

// splitLimits are Decode's thresholds; tests lower them so
// that small texts take every path.
type splitLimits struct {
	// minBytes is the smallest file tried: below it one parse is quick,
	// and the long lists it looks for cannot fit.
	minBytes int
	// minEntries is the fewest entries of a list for it to be cut.
	minEntries int
	// pieceEntries is the entries of one piece: small enough that the
	// cores share the work evenly, large enough that a piece's setup is
	// nothing beside its work.
	pieceEntries int
}

var defaultSplit = splitLimits{minBytes: 256 << 10, minEntries: 4096, pieceEntries: 2048}

func (lim splitLimits) decode(raw []byte, workers int, finish func(any) any) (map[string]any, bool) {
	if workers < 1 || len(raw) < lim.minBytes || !readAlike(raw) {
		return nil, false
	}
	lines := bytes.SplitAfter(raw, []byte("\n")) // each line keeps its "\n"
	if !plainDocument(lines) {
		return nil, false
	}
	regions, ok := findListRegions(lines, lim.minEntries)
	if !ok || len(regions) == 0 {
		return nil, false
	}
	skeleton, skelLines := buildSkeleton(lines, regions)

	pieces := make([][]listPiece, len(regions))
	for r := range regions {
		pieces[r] = regions[r].pieces(lim.pieceEntries)
	}
	var skelSection map[string]any
	skelOK := false
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer refuseOnPanic(&skelOK)
		skelSection, skelOK = decodeSkeleton(skeleton, regions, skelLines, finish)
	}()
	piecesOK := decodePieces(lines, regions, pieces, workers, finish)
	<-done
	if !piecesOK || !skelOK {
		return nil, false
	}
	for r, reg := range regions {
		list := make([]any, 0, reg.entries())
		for _, pc := range pieces[r] {
			list = append(list, pc.values...)
		}
		setKeepingKey(skelSection, reg.key, list)
	}
	return skelSection, true
}

// decodePieces decodes every piece on workers goroutines, each taking the
// next piece; it stops early and reports false when a piece refuses.
func decodePieces(lines [][]byte, regions []listRegion, pieces [][]listPiece, workers int, finish func(any) any) bool {
	type task struct{ region, piece int }
	next := make(chan task, 64)
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for t := range next {
				if failed.Load() {
					continue // drain
				}
				if !pieces[t.region][t.piece].decodeSafely(lines, regions[t.region].dashCol, finish) {
					failed.Store(true)
				}
			}
		})
	}
	for r := range pieces {
		for p := range pieces[r] {
			next <- task{r, p}
		}
	}
	close(next)
	wg.Wait()
	return !failed.Load()
}

// readAlike reports a text that yaml.v3 reads the same wherever a parse of
// it starts, and whose lines are its lines: UTF-8 holding only characters
// its reader takes, no U+FEFF, and no line break but "\n" (yaml.v3 also
// breaks lines at CR, NEL, LS and PS). Found by red-team passes:
//   - yaml.v3 reads a text starting with a UTF-16 byte order mark as
//     UTF-16, and a piece cut from it as UTF-8;
//   - its reader tests for U+FEFF at the start of each 512-byte refill of
//     its buffer, not where it reads, and then drops the first character
//     of lines at column 0: where refills fall depends on where the parse
//     began;
//   - it checks characters a refill at a time, and stops reading after the
//     first document: a control character after it fails the whole parse
//     or not depending on which 512-byte block it shares with what was read.
func readAlike(raw []byte) bool {
	for i := 0; i < len(raw); {
		c := raw[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(raw[i:])
		if !yamlReadable(r) || n == 1 {
			return false // n == 1: not UTF-8
		}
		i += n
	}
	return true
}

// yamlReadable reports a non-ASCII character yaml.v3's reader takes
// (readerc.go's allowed ranges), U+FEFF and the line breaks NEL, LS and PS
// aside.
func yamlReadable(r rune) bool {
	switch r {
	case 0xfeff, 0x2028, 0x2029:
		return false
	}
	return r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff
}

// maxSplitLine is the longest line Decode takes. yaml.v3
// refuses a document nested more than 10,000 blocks deep, and the whole
// file is a few blocks deeper than a piece: with every line shorter than
// this, neither comes near the limit (each block is at least one column
// deeper than the one it is in).
const maxSplitLine = 8192

// plainDocument reports a text without directives (a %TAG line changes
// what tags mean in the whole file, not in a piece parsed alone) and
// without a line long enough to nest near yaml.v3's depth limit.
func plainDocument(lines [][]byte) bool {
	for _, l := range lines {
		if len(l) > maxSplitLine || len(l) > 0 && l[0] == '%' {
			return false
		}
	}
	return true
}

// lineShape is what Decode needs of a line: its indentation in
// spaces and whether it holds only blanks or a comment. bad is set for a
// tab before the first other character (yaml.v3 then judges indentation
// its own way).
type lineShape struct {
	indent     int
	blank, bad bool
	comment    bool
}

func shapeOf(l []byte) lineShape {
	i := 0
	for i < len(l) && l[i] == ' ' {
		i++
	}
	s := lineShape{indent: i}
	switch {
	case i == len(l) || l[i] == '\n':
		s.blank = true
	case l[i] == '\t':
		s.bad = true
	case l[i] == '#':
		s.comment = true
	}
	return s
}

// listRegion is one long block list found in the text: the key it is the
// value of, the column of its dashes, and the line numbers (0-based) of its
// entries' dash lines; end is the first line after the region.
type listRegion struct {
	key     string
	dashCol int
	dashes  []int
	end     int
}

func (r *listRegion) entries() int { return len(r.dashes) }

// listPiece is a run of a region's entries, parsed and decoded apart.
type listPiece struct {
	dashes []int // line numbers of its entries' dash lines
	end    int   // the first line after the piece
	values []any
}

// pieces cuts the region into runs of pieceEntries entries.
func (r *listRegion) pieces(pieceEntries int) []listPiece {
	var out []listPiece
	for i := 0; i < len(r.dashes); i += pieceEntries {
		j := min(i+pieceEntries, len(r.dashes))
		end := r.end
		if j < len(r.dashes) {
			end = r.dashes[j]
		}
		out = append(out, listPiece{dashes: r.dashes[i:j], end: end})
	}
	return out
}

// decode reads the piece's entries: each simple one (simpleEntry) on its
// own, each run of others parsed by yaml.v3 as a document of its own,
// which must be a block sequence at dashCol whose entries start on the
// run's dash lines and hold no alias.
func (pc *listPiece) decode(lines [][]byte, dashCol int, finish func(any) any) bool {
	a := strarena.New()
	pc.values = make([]any, len(pc.dashes))
	slow := -1 // first entry of the current run of others
	for i, dash := range pc.dashes {
		if v, ok := simpleEntry(lines[dash:pc.entryEnd(i)], dashCol, a); ok {
			if slow >= 0 && !pc.decodeYAML(lines, dashCol, slow, i, finish) {
				return false
			}
			slow = -1
			pc.values[i] = v
			continue
		}
		if slow < 0 {
			slow = i
		}
	}
	return slow < 0 || pc.decodeYAML(lines, dashCol, slow, len(pc.dashes), finish)
}

// entryEnd is the first line after the piece's entry i.
func (pc *listPiece) entryEnd(i int) int {
	if i+1 < len(pc.dashes) {
		return pc.dashes[i+1]
	}
	return pc.end
}

// decodeYAML parses the piece's entries from..to-1 with yaml.v3.
func (pc *listPiece) decodeYAML(lines [][]byte, dashCol, from, to int, finish func(any) any) bool {
	first := pc.dashes[from]
	text := bytes.Join(lines[first:pc.entryEnd(to-1)], nil)
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil || len(doc.Content) != 1 {
		return false
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode || seq.Style&yaml.FlowStyle != 0 || seq.Tag != "!!seq" ||
		seq.Anchor != "" || seq.Line != 1 || seq.Column != dashCol+1 || len(seq.Content) != to-from {
		return false
	}
	for i, e := range seq.Content {
		if e.Line != pc.dashes[from+i]-first+1 || HasAlias(e) {
			return false
		}
	}
	// Finish the run as one list: the caller's copies then fill pages
	// of their own, apart from the decoder's garbage.
	values := make([]any, len(seq.Content))
	for i, e := range seq.Content {
		if err := e.Decode(&values[i]); err != nil {
			return false
		}
	}
	list, ok := finish(values).([]any)
	if !ok || len(list) != len(values) {
		return false
	}
	copy(pc.values[from:to], list)
	return true
}

// findListRegions finds the long block lists of the `permissions` mapping;
// ok is false when the text has a shape Decode does not take.
func findListRegions(lines [][]byte, minEntries int) ([]listRegion, bool) {
	start := -1
	for i, l := range lines {
		if isPermissionsKeyLine(l) {
			if start >= 0 {
				return nil, false // twice: the whole parse says why
			}
			start = i + 1
		}
	}
	if start < 0 || hasDocumentMarker(lines[start:]) {
		return nil, false
	}
	keyCol := -1
	var regions []listRegion
	for i := start; i < len(lines); i++ {
		s := shapeOf(lines[i])
		switch {
		case s.bad:
			return nil, false
		case s.blank || s.comment:
			continue
		case s.indent == 0:
			return regions, true // the next top-level key
		case keyCol < 0:
			keyCol = s.indent
		}
		if s.indent != keyCol {
			continue
		}
		key, ok := listKey(lines[i], keyCol)
		if !ok {
			continue
		}
		r := scanRegion(lines, i+1, keyCol)
		if r == nil {
			continue // not a list of a shape taken here: it stays in the skeleton
		}
		r.key = key
		if r.entries() >= minEntries {
			regions = append(regions, *r)
		}
		i = r.end - 1
	}
	return regions, true
}

// hasDocumentMarker reports a line that starts or ends a document. After
// the permissions key it ends the document yaml.v3 decodes, and what
// yaml.v3 does with the text after that end (it reads a little of it, as
// far as its lookahead and buffer go) is the kind of reading that depends
// on where a parse started.
func hasDocumentMarker(lines [][]byte) bool {
	for _, l := range lines {
		if (bytes.HasPrefix(l, []byte("---")) || bytes.HasPrefix(l, []byte("..."))) &&
			(len(l) == 3 || l[3] == ' ' || l[3] == '\n' || l[3] == '\t') {
			return true
		}
	}
	return false
}

// isPermissionsKeyLine reports `permissions:` alone at column 0 (trailing
// blanks or a comment allowed).
func isPermissionsKeyLine(l []byte) bool {
	rest, ok := bytes.CutPrefix(l, []byte("permissions:"))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " ")
	return len(rest) == 0 || rest[0] == '\n' || rest[0] == '#'
}

// listKey returns the key of a line `<keyCol spaces>name:` with nothing
// after the colon but blanks; name is letters, digits and underscores.
func listKey(l []byte, keyCol int) (string, bool) {
	l = bytes.TrimRight(l[keyCol:], " \n")
	name, ok := bytes.CutSuffix(l, []byte(":"))
	if !ok || len(name) == 0 {
		return "", false
	}
	for i, c := range name {
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return "", false
		}
	}
	return string(name), true
}

// scanRegion reads the list that follows a key line at keyCol (from line
// from). It returns nil when the next content line is no dash line (the
// key holds something else) or the list has a shape not taken here: a dash
// line with nothing after "- ", a tab in the indentation, or an end on a
// line deeper than keyCol.
func scanRegion(lines [][]byte, from, keyCol int) *listRegion {
	r := &listRegion{dashCol: -1, end: len(lines)}
	for i := from; i < len(lines); i++ {
		l, s := lines[i], shapeOf(lines[i])
		switch {
		case s.bad:
			return nil
		case s.blank || s.comment:
			continue
		case r.dashCol < 0:
			if s.indent < keyCol || l[s.indent] != '-' {
				return nil
			}
			r.dashCol = s.indent
		}
		switch {
		case s.indent > r.dashCol:
			continue
		case s.indent == r.dashCol && l[s.indent] == '-':
			if !isEntryDash(l[s.indent:]) {
				return nil
			}
			r.dashes = append(r.dashes, i)
			continue
		case s.indent > keyCol:
			return nil
		}
		r.end = i
		return r
	}
	return r
}

// isEntryDash reports "- " followed, on the same line, by a character that
// starts a node (not a blank, not a comment), so the entry's node starts on
// the dash line.
func isEntryDash(l []byte) bool {
	if len(l) < 3 || l[0] != '-' || l[1] != ' ' {
		return false
	}
	rest := bytes.TrimLeft(l[2:], " ")
	return len(rest) > 0 && rest[0] != '\n' && rest[0] != '#'
}

// buildSkeleton is the text with every region cut to its first entry. It
// returns, for each region, the skeleton line (1-based) of that entry's dash.
func buildSkeleton(lines [][]byte, regions []listRegion) ([]byte, []int) {
	var b bytes.Buffer
	at := make([]int, len(regions))
	line, written := 0, 1
	for r, reg := range regions {
		keep := reg.end
		if len(reg.dashes) > 1 {
			keep = reg.dashes[1]
		}
		for ; line < keep; line++ {
			if line == reg.dashes[0] {
				at[r] = written
			}
			b.Write(lines[line])
			written++
		}
		line = reg.end
	}
	for ; line < len(lines); line++ {
		b.Write(lines[line])
	}
	return b.Bytes(), at
}

// decodeSkeleton parses the skeleton and decodes its permissions mapping,
// checking that each region's key holds a block sequence whose one entry
// starts on the line where the skeleton kept the region's first entry.
func decodeSkeleton(text []byte, regions []listRegion, at []int, finish func(any) any) (map[string]any, bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil || len(doc.Content) != 1 {
		return nil, false
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode || top.Style&yaml.FlowStyle != 0 {
		return nil, false
	}
	_, perms := mapGet(top, "permissions")
	if perms == nil || perms.Kind != yaml.MappingNode || perms.Style&yaml.FlowStyle != 0 || HasAlias(perms) {
		return nil, false
	}
	// Every key a string as written: a key that decodes to a list's name
	// some other way (!!binary cnVsZXM= is "rules", a merge key can bring
	// one) would replace the list in the whole decode, and the split would
	// put the list back.
	for i := 0; i < len(perms.Content); i += 2 {
		if k := perms.Content[i]; k.Kind != yaml.ScalarNode || k.Tag != "!!str" {
			return nil, false
		}
	}
	for r, reg := range regions {
		k, v := mapGet(perms, reg.key)
		if k == nil || k.Kind != yaml.ScalarNode || k.Style != 0 || k.Tag != "!!str" ||
			v.Kind != yaml.SequenceNode || v.Style&yaml.FlowStyle != 0 || v.Tag != "!!seq" ||
			len(v.Content) != 1 || v.Content[0].Line != at[r] || v.Column != reg.dashCol+1 {
			return nil, false
		}
	}
	var out any
	if err := perms.Decode(&out); err != nil {
		return nil, false
	}
	m, ok := finish(out).(map[string]any)
	if !ok {
		return nil, false
	}
	return m, true
}

// hasAlias reports whether an alias node is in n's tree.
func HasAlias(n *yaml.Node) bool {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n = stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.AliasNode {
			return true
		}
		stack = append(stack, n.Content...)
	}
	return false
}

// mapGet returns the first key node named key of a mapping and its value.
func mapGet(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// setKeepingKey sets m[key] = v for a key m holds, keeping the map's own
// key string (which Finish may have compacted) rather than key: a Go map
// stores the key of an assignment.
func setKeepingKey(m map[string]any, key string, v any) {
	for k := range m {
		if k == key {
			m[k] = v
			return
		}
	}
}
