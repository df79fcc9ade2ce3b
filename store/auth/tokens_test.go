package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func openTokens(t *testing.T, dir string) (*Tokens, bool) {
	t.Helper()
	tok, created, err := OpenTokens(dir)
	if err != nil {
		t.Fatalf("OpenTokens: %v", err)
	}
	return tok, created
}

// TestOpenTokensAdminFile: the first start writes a random admin token to
// api_token with mode 0600; later starts read it and create nothing.
func TestOpenTokensAdminFile(t *testing.T) {
	dir := t.TempDir()
	tok, created := openTokens(t, dir)
	if !created {
		t.Fatal("first OpenTokens: created = false, want true")
	}
	fi, err := os.Stat(filepath.Join(dir, AdminTokenFile))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("api_token mode = %o, want 600", got)
	}
	admin, err := tok.AdminToken()
	if err != nil || len(admin) != 64 {
		t.Fatalf("AdminToken = %q, %v; want 64 hex characters", admin, err)
	}
	if p, ok := tok.Verify(admin); !ok || p.Role != RoleAdmin || p.TokenID != "admin" {
		t.Errorf("Verify(admin token) = %+v, %v; want the admin principal", p, ok)
	}
	again, created := openTokens(t, dir)
	if created {
		t.Error("second OpenTokens: created = true, want false")
	}
	if got, _ := again.AdminToken(); got != admin {
		t.Errorf("second start's admin token = %q, want the first %q", got, admin)
	}
}

// TestOpenTokensRefusesBadFiles: a short admin token and a tokens.json that
// does not parse stop the start instead of running with a weak or no list.
func TestOpenTokensRefusesBadFiles(t *testing.T) {
	cases := []struct {
		note, admin, list, want string
	}{
		{note: "short admin token", admin: "short\n", want: "shorter than 16"},
		{note: "blank admin token", admin: "   \n", want: "shorter than 16"},
		{note: "broken tokens.json", admin: strings.Repeat("a", 32), list: "[{", want: "tokens.json"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, AdminTokenFile), []byte(c.admin), 0o600); err != nil {
			t.Fatal(err)
		}
		if c.list != "" {
			if err := os.WriteFile(filepath.Join(dir, tokensFile), []byte(c.list), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err := OpenTokens(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want one saying %q", c.note, err, c.want)
		}
	}
}

// TestTokensCreateVerifyRevoke: a created token verifies with its role and
// scopes, survives a restart, is stored only as a hash, and stops
// verifying (everywhere it is asked) once revoked.
func TestTokensCreateVerifyRevoke(t *testing.T) {
	dir := t.TempDir()
	tok, _ := openTokens(t, dir)
	info, secret, err := tok.Create("ci", RoleApprover, []string{"web"}, []string{"s1"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if !strings.HasPrefix(info.ID, "tok_") || len(secret) != 64 || info.Hash == "" {
		t.Errorf("Create = %+v, secret %q; want a tok_ id, a 64-hex secret and a hash", info, secret)
	}
	p, ok := tok.Verify("  " + secret + "\n")
	if !ok || p.TokenID != info.ID || p.Name != "ci" || p.Role != RoleApprover ||
		len(p.Channels) != 1 || p.Channels[0] != "web" || len(p.Sessions) != 1 || p.Sessions[0] != "s1" {
		t.Errorf("Verify(secret) = %+v, %v", p, ok)
	}
	raw, err := os.ReadFile(filepath.Join(dir, tokensFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), secret) {
		t.Error("tokens.json holds the secret itself")
	}
	var stored []TokenInfo
	if err := json.Unmarshal(raw, &stored); err != nil || len(stored) != 1 || stored[0].Hash != info.Hash {
		t.Errorf("tokens.json = %s (%v), want the one token's hash", raw, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, tokensFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf("tokens.json mode = %o, want 600", fi.Mode().Perm())
	}

	restarted, _ := openTokens(t, dir)
	if _, ok := restarted.Verify(secret); !ok || !restarted.Active(info.ID) {
		t.Error("after a restart the created token no longer verifies")
	}
	var revoked atomic.Int64
	tok.OnRevoke(func() {
		// The hook may verify tokens itself: the lock is released by now.
		if _, ok := tok.Verify(secret); !ok {
			revoked.Add(1)
		}
	})
	if err := tok.Revoke(info.ID); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if revoked.Load() != 1 {
		t.Errorf("OnRevoke ran %d times seeing the token gone, want 1", revoked.Load())
	}
	if _, ok := tok.Verify(secret); ok || tok.Active(info.ID) {
		t.Error("a revoked token still verifies or is active")
	}
	if err := tok.Revoke(info.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Revoke: err = %v, want ErrNotFound", err)
	}
	if again, _ := openTokens(t, dir); len(again.List()) != 0 {
		t.Errorf("after revoke and restart: %d tokens listed, want 0", len(again.List()))
	}
	if !tok.Active("admin") {
		t.Error(`Active("admin") = false; the admin token always exists`)
	}
}

// TestTokensVerifyRefuses: what is not a token never verifies.
func TestTokensVerifyRefuses(t *testing.T) {
	tok, _ := openTokens(t, t.TempDir())
	_, secret, err := tok.Create("a", RoleAgent, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	admin, _ := tok.AdminToken()
	cases := []struct{ note, token string }{
		{"empty", ""},
		{"blank", "   "},
		{"prefix of a token", secret[:63]},
		{"token plus a byte", secret + "0"},
		{"upper-cased token", strings.ToUpper(secret)},
		{"admin token hash", sha256Hex(admin)},
		{"stored hash of a token", tok.List()[0].Hash},
	}
	for _, c := range cases {
		if p, ok := tok.Verify(c.token); ok {
			t.Errorf("%s: Verify = %+v, true; want false", c.note, p)
		}
	}
}

// TestTokensCreateBadRole: only admin, approver and agent are roles; a bad
// one stores nothing.
func TestTokensCreateBadRole(t *testing.T) {
	tok, _ := openTokens(t, t.TempDir())
	for _, role := range []string{"", "root", "Admin", "admin "} {
		if _, _, err := tok.Create("x", role, nil, nil); !errors.Is(err, ErrBadRole) {
			t.Errorf("Create with role %q: err = %v, want ErrBadRole", role, err)
		}
	}
	if n := len(tok.List()); n != 0 {
		t.Errorf("%d tokens stored after bad roles, want 0", n)
	}
}

// TestBearerToken reads the Authorization header as RFC 6750 writes it.
func TestBearerToken(t *testing.T) {
	cases := []struct {
		note, header, want string
		ok                 bool
	}{
		{"plain", "Bearer abc", "abc", true},
		{"scheme in any case", "bearer abc", "abc", true},
		{"upper case", "BEARER abc", "abc", true},
		{"spaces around the token", "Bearer   abc  ", "abc", true},
		{"no token", "Bearer ", "", false},
		{"no space", "Bearerabc", "", false},
		{"basic auth", "Basic YTpi", "", false},
		{"empty", "", "", false},
		{"token alone", "abc", "", false},
	}
	for _, c := range cases {
		got, ok := BearerToken(c.header)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: BearerToken(%q) = %q, %v; want %q, %v", c.note, c.header, got, ok, c.want, c.ok)
		}
	}
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
