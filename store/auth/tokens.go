// Package auth owns who may do what: API tokens (the first-start admin token
// file and the hashed tokens.json in the config dir: Tokens; or, with
// --database-url, the auth_tokens table shared by every replica:
// PGTokens), browser sessions (MemorySessions, PGSessions), the principal a
// request acts as, and the roles admin, approver and agent.
package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/store/atomicfile"
)

// Roles of a token: admin may do everything, approver reads the policy and
// answers approvals, agent only evaluates and checks.
const (
	RoleAdmin    = "admin"
	RoleApprover = "approver"
	RoleAgent    = "agent"
)

// AdminTokenFile is the first-start admin token, written once with mode 0600
// (openapi.yaml).
const AdminTokenFile = "api_token"

// tokensFile holds the other tokens, hashed.
const tokensFile = "tokens.json"

// ErrBadRole is returned for a role that is not admin, approver or agent.
var ErrBadRole = errors.New("role must be admin, approver or agent")

// ErrNotFound is returned for a token id that is not there.
var ErrNotFound = errors.New("auth: token not found")

// Principal is who a request acts as.
type Principal struct {
	TokenID string `json:"token_id"`
	Name    string `json:"name"`
	Role    string `json:"role"`
	// Channels and Sessions limit which approvals an approver sees; empty
	// means all.
	Channels []string `json:"channels,omitempty"`
	Sessions []string `json:"sessions,omitempty"`
}

// ApprovalFilter is what p may see and answer of the approvals: its
// channels and sessions (empty: all).
func (p Principal) ApprovalFilter() approval.Filter {
	return approval.Filter{Channels: p.Channels, Sessions: p.Sessions}
}

// TokenInfo is a stored token without its secret.
type TokenInfo struct {
	ID       string    `json:"id"`
	Name     string    `json:"name"`
	Role     string    `json:"role"`
	Channels []string  `json:"channels,omitempty"`
	Sessions []string  `json:"sessions,omitempty"`
	Created  time.Time `json:"created"`
	// Hash is the hex SHA-256 of the token; the token itself is never stored.
	Hash string `json:"hash"`
}

// Tokens verifies bearer tokens: the admin token of api_token and the hashed
// tokens of tokens.json. It is safe for concurrent use.
type Tokens struct {
	dir       string
	mu        sync.RWMutex
	adminHash [32]byte
	list      []TokenInfo
	// revoked are told, after a revocation is saved, that a token ended.
	revoked []func()
}

// OnRevoke registers f to be called after each revocation is saved, so
// that holders of long-lived connections can drop the revoked token's.
func (t *Tokens) OnRevoke(f func()) {
	t.mu.Lock()
	t.revoked = append(t.revoked, f)
	t.mu.Unlock()
}

// OpenTokens loads the tokens of a config dir, creating api_token with a new
// random admin token on first start. created reports whether it was created.
func OpenTokens(dir string) (t *Tokens, created bool, err error) {
	t = &Tokens{dir: dir}
	path := filepath.Join(dir, AdminTokenFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		tok, gerr := NewSecret()
		if gerr != nil {
			return nil, false, gerr
		}
		if err := atomicfile.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
			return nil, false, fmt.Errorf("write admin token: %w", err)
		}
		data, created = []byte(tok), true
	} else if err != nil {
		return nil, false, fmt.Errorf("read admin token: %w", err)
	}
	admin := strings.TrimSpace(string(data))
	if len(admin) < 16 {
		return nil, false, fmt.Errorf("%s: the admin token is shorter than 16 characters", path)
	}
	t.adminHash = sha256.Sum256([]byte(admin))
	if err := t.load(); err != nil {
		return nil, false, err
	}
	return t, created, nil
}

// AdminToken reads the admin token from api_token (for printing the admin URL).
func (t *Tokens) AdminToken() (string, error) {
	data, err := os.ReadFile(filepath.Join(t.dir, AdminTokenFile))
	return strings.TrimSpace(string(data)), err
}

func (t *Tokens) load() error {
	data, err := os.ReadFile(filepath.Join(t.dir, tokensFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read tokens: %w", err)
	}
	var list []TokenInfo
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("parse %s: %w", tokensFile, err)
	}
	t.list = list
	return nil
}

// NewSecret returns 32 random bytes as hex.
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// BearerToken returns the token of an Authorization header value of the
// form "Bearer <token>" (the scheme in any case).
func BearerToken(authorization string) (string, bool) {
	scheme, tok, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// Verify returns the principal of a token; ok is false for an unknown token.
// Comparison is of hashes in constant time.
func (t *Tokens) Verify(token string) (Principal, bool) {
	h, ok := tokenHash(token)
	if !ok {
		return Principal{}, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	if subtle.ConstantTimeCompare(h[:], t.adminHash[:]) == 1 {
		return adminPrincipal, true
	}
	hexHash := hex.EncodeToString(h[:])
	for _, ti := range t.list {
		if subtle.ConstantTimeCompare([]byte(hexHash), []byte(ti.Hash)) == 1 {
			return ti.principal(), true
		}
	}
	return Principal{}, false
}

// Active reports whether a token id still exists: the admin token always
// does, a created token until it is revoked.
func (t *Tokens) Active(tokenID string) bool {
	if tokenID == adminID {
		return true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, ti := range t.list {
		if ti.ID == tokenID {
			return true
		}
	}
	return false
}

// List returns the stored tokens (without secrets).
func (t *Tokens) List() []TokenInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return append([]TokenInfo(nil), t.list...)
}

// Create makes a new token and returns it; only its hash is stored.
func (t *Tokens) Create(name, role string, channels, sessions []string) (TokenInfo, string, error) {
	info, secret, err := newToken(name, role, channels, sessions)
	if err != nil {
		return TokenInfo{}, "", err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	next := append(append([]TokenInfo(nil), t.list...), info)
	if err := t.save(next); err != nil {
		return TokenInfo{}, "", err
	}
	t.list = next
	return info, secret, nil
}

// newToken makes the record and the secret of a new token (both stores'
// Create): a random id and secret, created now to the second, and only the
// secret's hash kept in the record.
func newToken(name, role string, channels, sessions []string) (TokenInfo, string, error) {
	if role != RoleAdmin && role != RoleApprover && role != RoleAgent {
		return TokenInfo{}, "", ErrBadRole
	}
	secret, err := NewSecret()
	if err != nil {
		return TokenInfo{}, "", err
	}
	id, err := NewSecret()
	if err != nil {
		return TokenInfo{}, "", err
	}
	return TokenInfo{ID: "tok_" + id[:12], Name: name, Role: role, Channels: channels, Sessions: sessions,
		Created: time.Now().UTC().Truncate(time.Second), Hash: hashHex(secret)}, secret, nil
}

// tokenHash is the SHA-256 of a presented token, spaces around it
// trimmed; ok is false for an empty one.
func tokenHash(token string) (h [32]byte, ok bool) {
	token = strings.TrimSpace(token)
	if token == "" {
		return h, false
	}
	return sha256.Sum256([]byte(token)), true
}

// hashHex is the hex SHA-256 of a token's secret, as TokenInfo.Hash keeps it.
func hashHex(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}

// principal is who a request with token ti acts as.
func (ti TokenInfo) principal() Principal {
	return Principal{TokenID: ti.ID, Name: ti.Name, Role: ti.Role, Channels: ti.Channels, Sessions: ti.Sessions}
}

// adminID is the id (and name) of the admin token and its principal.
const adminID = "admin"

// adminPrincipal is who a request with the admin token acts as.
var adminPrincipal = Principal{TokenID: adminID, Name: adminID, Role: RoleAdmin}

// Revoke deletes a token by id.
func (t *Tokens) Revoke(id string) error {
	hooks, err := t.revoke(id)
	if err != nil {
		return err
	}
	for _, f := range hooks {
		f()
	}
	return nil
}

// revoke removes token id and returns the hooks to call once the lock is
// released (they may verify tokens themselves).
func (t *Tokens) revoke(id string) ([]func(), error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := make([]TokenInfo, 0, len(t.list))
	for _, ti := range t.list {
		if ti.ID != id {
			next = append(next, ti)
		}
	}
	if len(next) == len(t.list) {
		return nil, ErrNotFound
	}
	if err := t.save(next); err != nil {
		return nil, err
	}
	t.list = next
	return slices.Clone(t.revoked), nil
}

func (t *Tokens) save(list []TokenInfo) error {
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(t.dir, tokensFile), data, 0o600); err != nil {
		return fmt.Errorf("write tokens: %w", err)
	}
	return nil
}
