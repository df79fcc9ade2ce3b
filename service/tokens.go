package service

import (
	"strings"

	"github.com/toolgate/toolgate/store/auth"
)

// Tokens is the API tokens' use cases; every one needs RightWrite.
type Tokens struct {
	store TokenStore
}

// NewTokens builds the tokens service; store nil means tokens cannot be
// managed here (Available reports false).
func NewTokens(store TokenStore) *Tokens { return &Tokens{store: store} }

// Available reports whether tokens can be managed.
func (t *Tokens) Available() bool { return t != nil && t.store != nil }

// List lists the tokens (never their secrets) for p.
func (t *Tokens) List(p auth.Principal) ([]auth.TokenInfo, error) {
	if err := Require(p, RightWrite); err != nil {
		return nil, err
	}
	return t.store.List(), nil
}

// Create makes a token for p and returns it with its secret, which is
// shown this once only.
func (t *Tokens) Create(p auth.Principal, name, role string, channels, sessions []string) (auth.TokenInfo, string, error) {
	if err := Require(p, RightWrite); err != nil {
		return auth.TokenInfo{}, "", err
	}
	if strings.TrimSpace(name) == "" {
		return auth.TokenInfo{}, "", BadRequest("name", "name is required")
	}
	return t.store.Create(name, role, channels, sessions)
}

// Revoke revokes a token for p; auth.ErrNotFound when there is none.
func (t *Tokens) Revoke(p auth.Principal, id string) error {
	if err := Require(p, RightWrite); err != nil {
		return err
	}
	return t.store.Revoke(id)
}
