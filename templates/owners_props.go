package templates

// OwnersProps are the owner scopes page's: every entry of
// permissions.owner_scopes, keyed by channel, then principal, and the
// validation problems found under owner_scopes.
type OwnersProps struct {
	Nav      Nav
	Rows     []OwnerRow
	Problems []string
}

// OwnerRow is one level of an owner scope: a tool's pattern, a tool's "*"
// or plain level, or the scope's defaults."*".
type OwnerRow struct {
	Channel   string
	Principal string
	// Tool is the tool name, or "" for the scope's defaults.
	Tool string
	// Match is the pattern, "*" for the tool's own level, or "" for defaults.
	Match string
	// Level is the level as written (an invalid one denies; see Problems).
	Level string
}
