package store

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/toolgate/toolgate/store/yamlsplit"
)

// configDoc is config.yaml parsed into yaml.v3 nodes, together with the raw
// text, so that a write can splice a re-encoded `permissions` section into the
// untouched bytes of the rest of the file.
type configDoc struct {
	raw []byte
	doc *yaml.Node // the document node, nil for an empty file
	top *yaml.Node // the top-level mapping, nil when the file has none
	key *yaml.Node // the `permissions` key node, nil when absent
	// startLine and endLine (1-based, end exclusive, 0 = end of file) bound
	// the lines of the original `permissions` entry.
	startLine, endLine int
	spliceable         bool
}

// errNotMapping is returned when the top level of config.yaml is not a mapping.
var errNotMapping = errors.New("the top level of config.yaml is not a mapping")

// parseConfig parses config.yaml text. An empty file (or one with only
// comments) is a valid, empty document.
func parseConfig(raw []byte) (*configDoc, error) {
	d := &configDoc{raw: raw, spliceable: true}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return d, nil
	}
	d.doc = &doc
	top := doc.Content[0]
	if top.Kind == yaml.ScalarNode && top.Tag == "!!null" {
		return d, nil
	}
	if top.Kind != yaml.MappingNode {
		return nil, errNotMapping
	}
	d.top = top
	d.spliceable = top.Style&yaml.FlowStyle == 0
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value != "permissions" {
			continue
		}
		d.key = top.Content[i]
		d.startLine = d.key.Line
		if i+2 < len(top.Content) {
			d.endLine = top.Content[i+2].Line
			if d.endLine <= d.startLine {
				d.spliceable = false
			}
		}
	}
	return d, nil
}

// permissions returns the value node of the `permissions` key, or nil.
func (d *configDoc) permissions() *yaml.Node {
	if d.top == nil {
		return nil
	}
	_, v := mapGet(d.top, "permissions")
	return v
}

// permissionsMap returns the `permissions` mapping, creating the key (at the
// end of the file) or replacing a non-mapping value when needed.
func (d *configDoc) permissionsMap() *yaml.Node {
	if d.top == nil {
		d.top = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		d.doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{d.top}}
	}
	k, v := mapGet(d.top, "permissions")
	if v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if k == nil {
		d.top.Content = append(d.top.Content, scalar("permissions"), m)
		return m
	}
	mapSet(d.top, "permissions", m)
	return m
}

// decodedPermissions decodes the `permissions` value (nil when absent or null).
func (d *configDoc) decodedPermissions() (any, error) {
	v := d.permissions()
	if v == nil {
		return nil, nil
	}
	if out, ok := decodeSectionParallel(v); ok {
		return out, nil
	}
	var out any
	if err := v.Decode(&out); err != nil {
		return nil, err
	}
	return compactSection(normalize(out)), nil
}

// parallelItems is the fewest entries of a list in permissions (rules,
// approval_overrides) for decodeSectionParallel to split it.
const parallelItems = 4096

// decodeSectionParallel decodes a permissions mapping as Decode does, but
// its long lists entry by entry in chunks on GOMAXPROCS goroutines (start
// time at 100,000 rules: BENCHMARKS.md#start-time-the-split-parse). Decoding an entry into `any` depends on
// that entry's nodes only, unless an alias refers elsewhere, so a section
// with an alias (or anything unusual: a non-mapping, a decode error) is
// left to the whole-node Decode (ok false), which also keeps yaml.v3's
// excessive-aliasing check and its exact error messages.
func decodeSectionParallel(v *yaml.Node) (any, bool) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || v.Kind != yaml.MappingNode || yamlsplit.HasAlias(v) {
		return nil, false
	}
	shallow := *v
	shallow.Content = append([]*yaml.Node(nil), v.Content...)
	var long []int // indexes of the key nodes of long lists
	for i := 0; i+1 < len(shallow.Content); i += 2 {
		k, e := shallow.Content[i], shallow.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!str" && e.Kind == yaml.SequenceNode &&
			e.ShortTag() == "!!seq" && len(e.Content) >= parallelItems {
			long = append(long, i)
			shallow.Content[i+1] = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		}
	}
	if len(long) == 0 {
		return nil, false
	}
	var out any
	if err := shallow.Decode(&out); err != nil {
		return nil, false
	}
	m, ok := out.(map[string]any)
	if !ok {
		return nil, false
	}
	lists := make([][]any, len(long))
	for j, i := range long {
		list, ok := decodeItems(v.Content[i+1].Content, workers)
		if !ok {
			return nil, false
		}
		lists[j] = list
	}
	m = normalize(m).(map[string]any)
	compactSection(m)
	for j, i := range long {
		name := v.Content[i].Value
		setKeepingKey(m, name, lists[j])
	}
	return m, true
}

// decodeItems decodes list entries into normalized, compacted values, in
// chunks on up to workers goroutines; ok is false if any entry fails.
func decodeItems(items []*yaml.Node, workers int) ([]any, bool) {
	out := make([]any, len(items))
	size := (len(items) + workers - 1) / workers
	failed := make([]bool, workers)
	var wg sync.WaitGroup
	for w := range workers {
		start, end := min(w*size, len(items)), min((w+1)*size, len(items))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := start; i < end; i++ {
				if err := items[i].Decode(&out[i]); err != nil {
					failed[w] = true
					return
				}
			}
			// Copy only after the whole chunk decoded: the copies, which
			// stay, then fill pages of their own instead of sitting among
			// the decoder's garbage and keeping its pages resident.
			for i := start; i < end; i++ {
				out[i] = normalize(out[i])
			}
			compactSection(out[start:end])
		}()
	}
	wg.Wait()
	return out, !slices.Contains(failed, true)
}

// render produces the new file text. The original `permissions` entry is
// replaced in place; every byte outside it is kept. When the file has no
// such entry, it is appended. Files whose layout cannot be spliced (flow
// style top level) are re-encoded whole.
func (d *configDoc) render() ([]byte, error) {
	perms := d.permissions()
	if perms == nil {
		return d.raw, nil
	}
	if !d.spliceable {
		return encodeNode(d.doc, 2)
	}
	if d.key == nil {
		block, err := d.encodePermissions(false)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		b.Write(d.raw)
		if b.Len() > 0 {
			if !bytes.HasSuffix(d.raw, []byte("\n")) {
				b.WriteByte('\n')
			}
			b.WriteByte('\n')
		}
		b.Write(block)
		return b.Bytes(), nil
	}
	lines := splitLines(d.raw)
	start := d.startLine - 1
	end := len(lines)
	if d.endLine > 0 {
		end = d.endLine - 1
	}
	if start < 0 || start >= end || end > len(lines) {
		// The parser's line numbers and ours disagree: refuse the edit
		// rather than splice at the wrong place.
		return nil, Refuse(ErrBrokenConfig, "config.yaml does not parse: permissions at lines %d-%d of a %d-line file", d.startLine, d.endLine, len(lines))
	}
	// Column-0 comments and blank lines before the next key belong to it
	// (yaml.v3 makes them its head comment): keep them outside the splice.
	for end > start+1 && isOuterLine(lines[end-1]) {
		end--
	}
	trailingOuter := d.endLine == 0 && end < len(lines) && hasComment(lines[end:])
	block, err := d.encodePermissions(trailingOuter)
	if err != nil {
		return nil, err
	}
	// The block takes the line break of the line it replaces, so that a
	// CR LF file stays CR LF (NEL, LS and PS are left as LF: not every YAML
	// reader counts them).
	if brk := lineEnd(lines[start]); brk == "\r\n" || brk == "\r" {
		block = bytes.ReplaceAll(block, []byte("\n"), []byte(brk))
	}
	var b bytes.Buffer
	for _, l := range lines[:start] {
		b.WriteString(l)
	}
	b.Write(block)
	for _, l := range lines[end:] {
		b.WriteString(l)
	}
	return b.Bytes(), nil
}

// encodePermissions encodes the `permissions` entry alone. Its head comment
// stays in the raw text above the splice, so it is left out here; so is a
// foot comment that the raw text after the splice already holds.
func (d *configDoc) encodePermissions(dropFoot bool) ([]byte, error) {
	var key yaml.Node
	if d.key != nil {
		key = *d.key
	} else {
		key = *scalar("permissions")
	}
	key.HeadComment = ""
	if dropFoot {
		key.FootComment = ""
	}
	v := d.permissions()
	entry := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{&key, v}}
	return encodeNode(entry, detectIndent(v))
}

// detectIndent keeps the indentation the file already uses for permissions.
func detectIndent(v *yaml.Node) int {
	if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Content[0].Column > 1 {
		if n := v.Content[0].Column - 1; n >= 2 && n <= 9 {
			return n
		}
	}
	return 2
}

func encodeNode(n *yaml.Node, indent int) ([]byte, error) {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(indent)
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode config: %w", err)
	}
	return b.Bytes(), nil
}

// splitLines splits text into lines that keep their line endings.
func splitLines(raw []byte) []string {
	s := string(raw)
	var lines []string
	for s != "" {
		i, n := lineBreak(s)
		if i < 0 {
			lines = append(lines, s+"\n")
			break
		}
		lines = append(lines, s[:i+n])
		s = s[i+n:]
	}
	return lines
}

// lineEnd returns the line break a line of splitLines ends with.
func lineEnd(l string) string {
	if i, n := lineBreak(l); i >= 0 {
		return l[i : i+n]
	}
	return "\n"
}

// lineBreak finds the first line break of s as yaml.v3 counts lines (LF,
// CR LF, a lone CR, NEL, LS and PS): its index and length, or -1.
func lineBreak(s string) (int, int) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			return i, 1
		case c == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				return i, 2
			}
			return i, 1
		case c == 0xC2 && strings.HasPrefix(s[i:], "\u0085"):
			return i, 2
		case c == 0xE2 && (strings.HasPrefix(s[i:], "\u2028") || strings.HasPrefix(s[i:], "\u2029")):
			return i, 3
		}
	}
	return -1, 0
}

func isOuterLine(l string) bool {
	t := strings.TrimRight(l, "\r\n")
	return strings.TrimSpace(t) == "" || strings.HasPrefix(t, "#")
}

func hasComment(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, "#") {
			return true
		}
	}
	return false
}
