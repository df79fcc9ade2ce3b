package service

import (
	"strings"

	"github.com/toolgate/toolgate/policy"
)

// SetOwnerScopes replaces owner_scopes with scopes, typed and already
// checked (policy.DecodeOwnerScopesInput); none configured removes them.
func (p *Policy) SetOwnerScopes(ifMatch string, scopes policy.OwnerScopes) (string, error) {
	return p.edit(ifMatch, func(d PolicyDocs) (string, error) { return d.SetOwnerScopes(scopes) })
}

// OwnerScopes returns owner_scopes in force as the API answers them (never
// nil), and the ETag. They are read from the typed policy (Typed), so the
// answer is the policy as the engine reads it. Owner scopes with problems
// (an entry in the earlier shape, a level in another spelling) are answered
// as written instead: the typed reading keeps only what the engine uses
// (an earlier-shape entry is empty, a bad level reads deny), and whoever
// fixes the file must see what it says.
func (p *Policy) OwnerScopes() (policy.Mapping, string, error) {
	sec, etag, err := p.Typed()
	if err != nil {
		return policy.Mapping{}, etag, err
	}
	if !ownerProblems(sec.Problems) {
		return policy.MappingOf(sec.Owners.Map()), etag, nil
	}
	w, etag, err := p.Section()
	if err != nil {
		return policy.Mapping{}, etag, err
	}
	return w.Owners.OrEmpty(), etag, nil
}

// ownerProblems reports whether a problem lies in owner_scopes.
func ownerProblems(problems []policy.Problem) bool {
	for _, pr := range problems {
		rest, ok := strings.CutPrefix(pr.Path, policy.PathOwners)
		if ok && (rest == "" || rest[0] == '.') {
			return true
		}
	}
	return false
}
