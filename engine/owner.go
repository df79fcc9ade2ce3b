package engine

import "github.com/toolgate/toolgate/policy"

// ownerScopes is the compiled permissions.owner_scopes of docs/decisions.md
// "Digital persona": keyed by channel, then by principal user id, as
// JiuwenSwarm writes it:
//
//	owner_scopes:
//	  feishu:
//	    ou_123:
//	      tools: {bash: {patterns: {"git *": allow}, "*": deny}, read_file: allow}
//	      defaults: {"*": deny}
type ownerScopes struct {
	// configured is false when owner_scopes is absent, empty or not a
	// mapping: a persona call then gets the global level with ask turned
	// into deny (docs/decisions.md#digital-persona-and-owner-scopes).
	configured bool
	scopes     map[ownerKey]*ownerScope
	// earlier maps a principal to the matched_rule of an entry written in
	// toolgate's earlier shape (owner_scopes.<principal>.tools). Such an
	// entry is inert, and every persona call of that principal is denied
	// until it is moved under a channel: its restrictions are never
	// silently dropped.
	earlier map[string]string
}

// ownerKey finds an owner scope: the channel id and the principal user id,
// both as written in config.yaml (the reference strips the request's
// values and compares them exactly, case included).
type ownerKey struct{ channel, principal string }

// ownerScope is the compiled scope of one principal on one channel.
type ownerScope struct {
	rule string // owner_scopes.<channel>.<principal>
	// broken is set when the scope, or its tools or defaults, is not a
	// mapping: the admin meant to restrict this persona and toolgate cannot
	// tell how, so every call under it is denied (fail closed).
	broken   bool
	tools    map[string]*ownerTool
	defaults toolLevel
}

// ownerTool is the entry of one tool in an owner scope: a plain level (in
// star), or patterns and a "*" level.
type ownerTool struct {
	rule     string // owner_scopes.<channel>.<principal>.tools.<tool>
	broken   bool   // not a level nor a mapping, or patterns not a mapping: denies
	patterns []ownerPattern
	star     toolLevel
}

// ownerPattern is one entry of tools.<tool>.patterns, in the sorted order
// of its pattern text.
type ownerPattern struct {
	m     *matcher
	level policy.Level
	rule  string // ...tools.<tool>.patterns['<pattern>']
}
