package main

import "encoding/json"

// hookSettings is the hooks part of an agent's settings file as toolgate
// writes it: the groups of each event (keyed by the agent's event names).
// The fields of each type are in the order encoding/json wrote the maps
// they replace (keys sorted), so the files and snippets stay the same
// bytes.
type hookSettings struct {
	Hooks map[string][]hookGroup `json:"hooks"`
}

// hookGroup is one entry of an event's list: a matcher (omitted when
// empty) and its handlers.
type hookGroup struct {
	Hooks   []hookHandler `json:"hooks"`
	Matcher string        `json:"matcher,omitempty"`
}

// hookHandler is one handler toolgate writes: an http hook (Claude Code)
// or a command hook; Name and Description are Gemini's.
type hookHandler struct {
	AllowedEnvVars []string          `json:"allowedEnvVars,omitempty"`
	Command        string            `json:"command,omitempty"`
	Description    string            `json:"description,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	Name           string            `json:"name,omitempty"`
	OnFailure      string            `json:"onFailure,omitempty"`
	Timeout        int               `json:"timeout"`
	Type           string            `json:"type"`
	URL            string            `json:"url,omitempty"`
}

// foundHandler is the fields toolgate reads of a handler in a settings
// file a person may have edited: a field of another type than the agents
// take reads as missing, and the other fields are not read.
type foundHandler struct {
	AllowedEnvVars looseStrings `json:"allowedEnvVars"`
	Command        looseString  `json:"command"`
	Headers        looseHeaders `json:"headers"`
	OnFailure      looseString  `json:"onFailure"`
	URL            looseString  `json:"url"`
}

// looseString is a JSON string; any other value reads as "".
type looseString string

func (s *looseString) UnmarshalJSON(b []byte) error {
	var v string
	if json.Unmarshal(b, &v) != nil {
		v = ""
	}
	*s = looseString(v)
	return nil
}

// looseStrings are the strings of a JSON list; other items, or a value
// that is no list, are left out.
type looseStrings []string

func (l *looseStrings) UnmarshalJSON(b []byte) error {
	var items []json.RawMessage
	*l = nil
	if json.Unmarshal(b, &items) != nil {
		return nil
	}
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			*l = append(*l, s)
		}
	}
	return nil
}

// looseHeaders are the headers of an http hook: a header whose value is
// no string is sent empty; a value that is no object is no headers.
type looseHeaders map[string]looseString

func (h *looseHeaders) UnmarshalJSON(b []byte) error {
	var m map[string]looseString
	if json.Unmarshal(b, &m) != nil {
		m = nil
	}
	*h = m
	return nil
}
