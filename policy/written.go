package policy

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Written is the permissions section as written (docs/configuration.md#permissions-keys):
// every key in its place, each value exactly as it was written, broken ones
// included. Section is what the engine reads and is lossy on purpose (a
// level in any case reads as that level, `tools: bash` as [bash], a broken
// entry is left out); Written is what an answer shows and an edit writes
// back, so whoever fixes a file sees what it says and a read-then-write
// changes nothing it did not mean to. WrittenOf builds it from a decoded
// section; Map gives that mapping back, the same; its JSON is the JSON of
// that mapping, byte for byte.
type Written struct {
	Enabled        Value
	Schema         Value
	Version        Value
	PermissionMode Value
	DenyGuidance   Value
	Defaults       Mapping
	Tools          Mapping
	External       Mapping
	Owners         Mapping
	Rules          List
	Overrides      List
	// Extra are the keys the section does not know, sorted by key.
	Extra []Field
}

// Value is one value as written: a scalar, or anything at all where a
// scalar belongs. The zero Value is an absent key; a key written without a
// value is present and null.
type Value struct {
	set bool
	v   any
}

// Field is one key of a mapping and its value as written.
type Field struct {
	Key   string
	Value Value
}

// Mapping is a value that should be a mapping (tools, defaults,
// external_directory, owner_scopes): its keys, sorted, when it is one, else
// the value as written (a plain level is a valid external_directory).
type Mapping struct {
	Value
	isMap bool
	// Keys are the mapping's keys, sorted by key; nil when the value is not
	// a mapping.
	Keys []Field
}

// List is a value that should be a list of entries (rules,
// approval_overrides): its entries when it is one, else the value as
// written.
type List struct {
	Value
	isList bool
	// Entries are the list's entries in file order; nil when the value is
	// not a list.
	Entries []Entry
}

// Entry is one entry of rules or approval_overrides as written; ID is its
// id when the entry is a mapping with a string id, else "".
type Entry struct {
	ID string
	Value
}

// Set reports whether the key was written (with a value or without).
func (v Value) Set() bool { return v.set }

// Any is the value as decoded (nil when absent or null); callers read it
// and never modify it.
func (v Value) Any() any { return v.v }

// Ptr is the value for an answer that leaves an absent key out: nil when
// absent, else the value (which may be null).
func (v Value) Ptr() *Value {
	if !v.set {
		return nil
	}
	return &v
}

// Text is the value when it is a string.
func (v Value) Text() (string, bool) {
	s, ok := v.v.(string)
	return s, ok
}

// MarshalJSON writes the value as encoding/json writes the decoded value
// (null when absent).
func (v Value) MarshalJSON() ([]byte, error) { return marshalValue(v.v) }

// IsMapping reports whether the value is a mapping.
func (m Mapping) IsMapping() bool { return m.isMap }

// Get is the value of key in the mapping.
func (m Mapping) Get(key string) (Value, bool) {
	i, ok := slices.BinarySearchFunc(m.Keys, key, func(f Field, k string) int { return strings.Compare(f.Key, k) })
	if !ok {
		return Value{}, false
	}
	return m.Keys[i].Value, true
}

// OrEmpty is the mapping, or an empty mapping when the value is not one
// (an answer that must be an object).
func (m Mapping) OrEmpty() Mapping {
	if m.isMap {
		return m
	}
	return Mapping{Value: Value{set: true}, isMap: true, Keys: []Field{}}
}

// Ptr is the mapping for an answer that leaves an absent key out.
func (m Mapping) Ptr() *Mapping {
	if !m.set {
		return nil
	}
	return &m
}

// MarshalJSON writes the mapping as encoding/json writes the decoded
// mapping: keys sorted.
func (m Mapping) MarshalJSON() ([]byte, error) {
	if !m.isMap {
		return marshalValue(m.v)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range m.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := appendField(&b, f.Key, f.Value.v); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// IsList reports whether the value is a list.
func (l List) IsList() bool { return l.isList }

// Find is the entry with that id.
func (l List) Find(id string) (Entry, bool) {
	for _, e := range l.Entries {
		if e.ID == id && e.ID != "" {
			return e, true
		}
	}
	return Entry{}, false
}

// All is the entries, never nil (an answer that must be a list).
func (l List) All() []Entry {
	if l.Entries == nil {
		return []Entry{}
	}
	return l.Entries
}

// MarshalJSON writes the list as encoding/json writes the decoded list.
func (l List) MarshalJSON() ([]byte, error) {
	if !l.isList {
		return marshalValue(l.v)
	}
	return marshalValue(l.Entries)
}

// WrittenOf reads a decoded section (nil when absent) as written. It takes
// the values as they are, without copying: the caller hands over m.
func WrittenOf(m map[string]any) Written { return mappingOf(m).Written() }

// Written reads the mapping as a permissions section as written (nothing
// when it is not a mapping).
func (m Mapping) Written() Written {
	var w Written
	for _, f := range m.Keys {
		k, v, val := f.Key, f.Value.v, f.Value
		switch k {
		case "enabled":
			w.Enabled = val
		case "schema":
			w.Schema = val
		case "version":
			w.Version = val
		case "permission_mode":
			w.PermissionMode = val
		case "deny_guidance_message":
			w.DenyGuidance = val
		case "defaults":
			w.Defaults = mappingOf(v)
		case "tools":
			w.Tools = mappingOf(v)
		case "external_directory":
			w.External = mappingOf(v)
		case "owner_scopes":
			w.Owners = mappingOf(v)
		case "rules":
			w.Rules = listOf(v)
		case "approval_overrides":
			w.Overrides = listOf(v)
		default:
			w.Extra = append(w.Extra, val.field(k)) // sorted, as m.Keys
		}
	}
	return w
}

func (v Value) field(key string) Field { return Field{Key: key, Value: v} }

// UnmarshalJSONFrom reads a request's object as given, decoded exactly as
// into a map[string]any (numbers as float64; a value that is not an object
// is refused with the same error, naming the same place), so the strict
// input checks name fields and tell null from absent as they did. A JSON
// null is a Mapping that is set and not a mapping.
func (m *Mapping) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var obj map[string]any
	if err := jsonv2.UnmarshalDecode(dec, &obj); err != nil {
		return err
	}
	if obj == nil {
		*m = Mapping{Value: Value{set: true}}
		return nil
	}
	*m = mappingOf(obj)
	return nil
}

// Without is the mapping without key (the mapping itself when it is not
// one or has no such key).
func (m Mapping) Without(key string) Mapping {
	i, ok := slices.BinarySearchFunc(m.Keys, key, func(f Field, k string) int { return strings.Compare(f.Key, k) })
	if !ok {
		return m
	}
	m.Keys = slices.Delete(slices.Clone(m.Keys), i, i+1)
	return m
}

// MappingOf reads one value that should be a mapping, as written.
func MappingOf(v any) Mapping { return mappingOf(v) }

func mappingOf(v any) Mapping {
	m, ok := v.(map[string]any)
	if !ok {
		return Mapping{Value: Value{set: true, v: v}}
	}
	keys := make([]Field, 0, len(m))
	for k, x := range m {
		keys = append(keys, Field{Key: k, Value: Value{set: true, v: x}})
	}
	sortFields(keys)
	return Mapping{Value: Value{set: true}, isMap: true, Keys: keys}
}

// EntryOf is one entry of a list as written.
func EntryOf(v any) Entry {
	e := Entry{Value: Value{set: true, v: v}}
	if m, isMap := v.(map[string]any); isMap {
		e.ID, _ = m["id"].(string)
	}
	return e
}

// ListOf is a list of these entries.
func ListOf(entries []Entry) List {
	return List{Value: Value{set: true}, isList: true, Entries: entries}
}

func listOf(v any) List {
	l, ok := v.([]any)
	if !ok {
		return List{Value: Value{set: true, v: v}}
	}
	entries := make([]Entry, len(l))
	for i, x := range l {
		entries[i] = EntryOf(x)
	}
	return ListOf(entries)
}

func sortFields(fs []Field) {
	slices.SortFunc(fs, func(a, b Field) int { return strings.Compare(a.Key, b.Key) })
}

// Map is the decoded section again (never nil): WrittenOf(m).Map() holds
// what m held. It shares the values with w.
func (w *Written) Map() map[string]any {
	m := make(map[string]any, 12+len(w.Extra))
	for _, f := range w.fields() {
		m[f.key] = f.value()
	}
	return m
}

// Section reads the section as written as the engine does (DecodeSection):
// the typed model, lossy on purpose, with every problem it has.
func (w *Written) Section() Section { return DecodeSection(w.Map()) }

func (m Mapping) value() any {
	if !m.isMap {
		return m.v
	}
	out := make(map[string]any, len(m.Keys))
	for _, f := range m.Keys {
		out[f.Key] = f.Value.v
	}
	return out
}

// Any is the mapping as decoded: a map[string]any when it is a mapping,
// else the value as written.
func (m Mapping) Any() any { return m.value() }

func (l List) value() any {
	if !l.isList {
		return l.v
	}
	out := make([]any, len(l.Entries))
	for i, e := range l.Entries {
		out[i] = e.v
	}
	return out
}

// Any is the list as decoded: a []any when it is a list, else the value
// as written.
func (l List) Any() any { return l.value() }

// writtenField is one key of the section that is set: its name, how to
// decode it again and how to write it as JSON.
type writtenField struct {
	key   string
	value func() any
	json  json.Marshaler
}

// fields are the keys that are set, sorted by key (the order encoding/json
// writes a map in).
func (w *Written) fields() []writtenField {
	var out []writtenField
	add := func(key string, set bool, value func() any, j json.Marshaler) {
		if set {
			out = append(out, writtenField{key, value, j})
		}
	}
	val := func(v Value) func() any { return func() any { return v.v } }
	add("approval_overrides", w.Overrides.set, w.Overrides.value, w.Overrides)
	add("defaults", w.Defaults.set, w.Defaults.value, w.Defaults)
	add("deny_guidance_message", w.DenyGuidance.set, val(w.DenyGuidance), w.DenyGuidance)
	add("enabled", w.Enabled.set, val(w.Enabled), w.Enabled)
	add("external_directory", w.External.set, w.External.value, w.External)
	add("owner_scopes", w.Owners.set, w.Owners.value, w.Owners)
	add("permission_mode", w.PermissionMode.set, val(w.PermissionMode), w.PermissionMode)
	add("rules", w.Rules.set, w.Rules.value, w.Rules)
	add("schema", w.Schema.set, val(w.Schema), w.Schema)
	add("tools", w.Tools.set, w.Tools.value, w.Tools)
	add("version", w.Version.set, val(w.Version), w.Version)
	for _, f := range w.Extra {
		add(f.Key, true, val(f.Value), f.Value)
	}
	slices.SortStableFunc(out, func(a, b writtenField) int { return strings.Compare(a.key, b.key) })
	return out
}

// MarshalJSON writes the section as encoding/json writes Map().
func (w Written) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range w.fields() {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := appendKey(&b, f.key); err != nil {
			return nil, err
		}
		data, err := f.json.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Write(data)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalValue is encoding/json's text of v without HTML escaping; the
// encoder that writes the answer escapes it if it is told to.
func marshalValue(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func appendKey(b *bytes.Buffer, key string) error {
	k, err := marshalValue(key)
	if err != nil {
		return err
	}
	b.Write(k)
	b.WriteByte(':')
	return nil
}

func appendField(b *bytes.Buffer, key string, v any) error {
	if err := appendKey(b, key); err != nil {
		return err
	}
	data, err := marshalValue(v)
	if err != nil {
		return err
	}
	b.Write(data)
	return nil
}
