package main

import (
	"encoding/json"
	"fmt"
	"sort"
)

// hookChange is what wiring did to one settings file.
type hookChange struct {
	removed int      // older toolgate handlers taken out
	events  []string // the events that now run toolgate's hook
}

// wireHooks makes toolgate's hook the one toolgate hook of settings: every
// toolgate handler already there goes (an older URL, wait or binary), the
// other hooks stay as they were, and snippet's groups are appended to their
// events. An empty snippet only removes.
func wireHooks(settings *jsonObject, snippet hookSettings) (hookChange, error) {
	var ch hookChange
	events, err := settings.object("hooks")
	if err != nil {
		return ch, err
	}
	if ch.removed, err = stripToolgateHooks(events, snippetCommands(snippet)); err != nil {
		return ch, err
	}
	wanted := snippet.Hooks
	names := make([]string, 0, len(wanted))
	for name := range wanted {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		groups, err := eventGroups(events, name)
		if err != nil {
			return ch, err
		}
		for _, g := range wanted[name] {
			raw, err := marshalPlain(g)
			if err != nil {
				return ch, err
			}
			groups = append(groups, raw)
		}
		if err := setGroups(events, name, groups); err != nil {
			return ch, err
		}
		ch.events = append(ch.events, name)
	}
	if len(events.keys) == 0 {
		settings.remove("hooks")
		return ch, nil
	}
	raw, err := events.MarshalJSON()
	if err != nil {
		return ch, err
	}
	settings.set("hooks", raw)
	return ch, nil
}

// eventGroups reads an event's list of matcher groups.
func eventGroups(events *jsonObject, name string) ([]json.RawMessage, error) {
	raw, ok := events.get(name)
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var groups []json.RawMessage
	if err := json.Unmarshal(raw, &groups); err != nil {
		return nil, fmt.Errorf("hooks.%s is not a list of hook groups: %w", name, err)
	}
	return groups, nil
}

// setGroups writes an event's groups back; an empty list removes the event.
func setGroups(events *jsonObject, name string, groups []json.RawMessage) error {
	if len(groups) == 0 {
		events.remove(name)
		return nil
	}
	raw, err := marshalPlain(groups)
	if err != nil {
		return err
	}
	events.set(name, raw)
	return nil
}

// snippetCommands is every command of a snippet's handlers.
func snippetCommands(snippet hookSettings) []string {
	var cmds []string
	for _, groups := range snippet.Hooks {
		for _, g := range groups {
			for _, h := range g.Hooks {
				if h.Command != "" {
					cmds = append(cmds, h.Command)
				}
			}
		}
	}
	return cmds
}

// stripToolgateHooks takes every toolgate handler out of every event (a
// `toolgate hook` command, a toolgate URL, or one of commands: what setup
// writes now, whatever the program is called); a group left without
// handlers goes too. It returns how many it took.
func stripToolgateHooks(events *jsonObject, commands []string) (int, error) {
	removed := 0
	for _, name := range append([]string(nil), events.keys...) {
		groups, err := eventGroups(events, name)
		if err != nil {
			return 0, err
		}
		kept := groups[:0:0]
		for i, g := range groups {
			out, n, err := stripGroup(g, commands)
			if err != nil {
				return 0, fmt.Errorf("hooks.%s[%d]: %w", name, i, err)
			}
			removed += n
			if out != nil {
				kept = append(kept, out)
			}
		}
		if len(kept) != len(groups) || removed > 0 {
			if err := setGroups(events, name, kept); err != nil {
				return 0, err
			}
		}
	}
	return removed, nil
}

// stripGroup takes toolgate's handlers out of one group. It returns the
// group (nil when toolgate's handlers were all it had) and how many it
// took; a group it took nothing from comes back byte for byte.
func stripGroup(raw json.RawMessage, commands []string) (json.RawMessage, int, error) {
	group, err := parseObject(raw)
	if err != nil {
		return nil, 0, err
	}
	hooksRaw, ok := group.get("hooks")
	if !ok {
		return raw, 0, nil
	}
	var handlers []json.RawMessage
	if err := json.Unmarshal(hooksRaw, &handlers); err != nil {
		return nil, 0, fmt.Errorf("its hooks are not a list: %w", err)
	}
	kept := handlers[:0:0]
	for _, h := range handlers {
		var fields foundHandler
		if json.Unmarshal(h, &fields) == nil && (isToolgateHook(fields) || isOurCommand(string(fields.Command), commands)) {
			continue
		}
		kept = append(kept, h)
	}
	n := len(handlers) - len(kept)
	if n == 0 {
		return raw, 0, nil
	}
	if len(kept) == 0 {
		return nil, n, nil
	}
	out, err := marshalPlain(kept)
	if err != nil {
		return nil, 0, err
	}
	group.set("hooks", out)
	b, err := group.MarshalJSON()
	return b, n, err
}
