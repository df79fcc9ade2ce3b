package policy

// RuleByID returns the first rule of list with id, as the pages and the
// edit routes find a rule or override.
func RuleByID(list []Rule, id string) (*Rule, bool) {
	for i := range list {
		if list[i].ID == id {
			return &list[i], true
		}
	}
	return nil, false
}

// Tool returns the setting of one tool in permissions.tools.
func (s *Section) Tool(name string) (ToolSetting, bool) {
	for _, t := range s.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolSetting{}, false
}

// Key returns the level of one path-prefix key of external_directory, as
// written ("*" gives the default level).
func (x *ExternalDirs) Key(key string) (Level, bool) {
	if key == "*" {
		return x.Star, x.StarSet || x.Fixed
	}
	for _, k := range x.Keys {
		if k.Key == key {
			return k.Level, true
		}
	}
	return LevelNone, false
}

// Scope returns the owner scope of one principal on one channel.
func (o *OwnerScopes) Scope(channel, principal string) (*OwnerScope, bool) {
	for i := range o.Channels {
		ch := &o.Channels[i]
		if ch.Channel != channel {
			continue
		}
		for j := range ch.Principals {
			if ch.Principals[j].Principal == principal {
				return &ch.Principals[j], true
			}
		}
	}
	return nil, false
}
