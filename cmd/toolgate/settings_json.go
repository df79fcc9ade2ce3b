package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// jsonObject is a JSON object that keeps its keys in the order it read
// them, so that a settings file toolgate edits changes only where toolgate
// changed it: the other keys stay where the person put them.
type jsonObject struct {
	keys []string
	vals map[string]json.RawMessage
}

// errNotObject is a settings file (or a part of one) that is not a JSON
// object where the agent expects one.
var errNotObject = errors.New("not a JSON object")

// parseObject reads one JSON object; blank input is an empty object. A key
// that appears twice is refused: the agents do not agree on which one wins,
// so toolgate will not guess which one it is editing.
func parseObject(data []byte) (*jsonObject, error) {
	o := &jsonObject{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil {
		return nil, syntaxError(data, dec, err)
	} else if tok != json.Delim('{') {
		return nil, errNotObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, syntaxError(data, dec, err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntaxError(data, dec, err)
		}
		if _, dup := o.vals[key]; dup {
			return nil, fmt.Errorf("the key %q appears twice", key)
		}
		o.keys = append(o.keys, key)
		o.vals[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntaxError(data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("line %d: text after the closing }", lineAt(data, dec.InputOffset()))
	}
	return o, nil
}

// syntaxError names the line where reading stopped.
func syntaxError(data []byte, dec *json.Decoder, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("line %d: %w", lineAt(data, dec.InputOffset()), err)
}

// lineAt is the 1-based line of a byte offset.
func lineAt(data []byte, off int64) int {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// get returns the raw value of a key.
func (o *jsonObject) get(key string) (json.RawMessage, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// set puts a value under a key, at the end when the key is new.
func (o *jsonObject) set(key string, v json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// remove deletes a key.
func (o *jsonObject) remove(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			return
		}
	}
}

// object reads a key's value as an object; a missing key is an empty one.
func (o *jsonObject) object(key string) (*jsonObject, error) {
	raw, ok := o.vals[key]
	if !ok || string(raw) == "null" {
		return parseObject(nil)
	}
	v, err := parseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", key, err)
	}
	return v, nil
}

// MarshalJSON writes the object with its keys in order.
func (o *jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// indented is the object as a settings file: two-space indents and a final
// newline, with & < > left as written (a URL's & stays &).
func (o *jsonObject) indented() ([]byte, error) {
	raw, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// marshalPlain is json.Marshal without the HTML escaping of & < >.
func marshalPlain(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

// toolgateCommand matches the command of a toolgate hook: a program (any
// name or path, quoted or not, as --bin said) running `hook <agent>`.
var toolgateCommand = regexp.MustCompile(`^\s*(?:'[^']*'|"[^"]*"|\S+)\s+hook\s+(?:claude-code|codex|gemini)(?:\s|$)`)

// isToolgateHook tells a hook handler toolgate wrote: an http hook posting
// to a toolgate hook route, or a command running `toolgate hook`.
func isToolgateHook(h foundHandler) bool {
	if h.URL != "" && strings.Contains(string(h.URL), "/api/v1/hooks/") {
		return true
	}
	return toolgateCommand.MatchString(string(h.Command))
}
