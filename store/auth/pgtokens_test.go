package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/pgtest"
	"github.com/toolgate/toolgate/store/pg"
	"github.com/toolgate/toolgate/store/pg/dbtest"
)

func openPGTokens(t *testing.T, db *pg.DB, dir string) (*PGTokens, bool) {
	t.Helper()
	tok, created, err := OpenPGTokens(context.Background(), db, dir)
	if err != nil {
		t.Fatalf("OpenPGTokens: %v", err)
	}
	return tok, created
}

// TestTokensAcrossReplicas: the admin token is made once and written to
// the first replica's config dir; a token made on one replica verifies on
// another, and its revocation ends it there too, telling OnRevoke.
func TestTokensAcrossReplicas(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	// The first replica's config dir does not exist yet: OpenPGTokens makes it.
	dirA, dirB := filepath.Join(t.TempDir(), "new", "dir"), t.TempDir()
	a, createdA := openPGTokens(t, dbtest.Open(t, dsn), dirA)
	b, createdB := openPGTokens(t, dbtest.Open(t, dsn), dirB)
	if !createdA || createdB {
		t.Fatalf("created = %v, %v; want true for the first replica only", createdA, createdB)
	}
	secret, err := a.AdminToken()
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dirA, AdminTokenFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("api_token: %v, %v; want mode 0600", fi, err)
	}
	if _, err := b.AdminToken(); err == nil {
		t.Error("AdminToken on a replica without api_token: no error")
	}
	if p, ok := b.Verify(secret); !ok || p.Role != RoleAdmin {
		t.Errorf("admin token on the other replica: %+v, %v", p, ok)
	}
	var revokedA, revokedB atomic.Int64
	a.OnRevoke(func() { revokedA.Add(1) })
	b.OnRevoke(func() { revokedB.Add(1) })

	info, tok, err := a.Create("ci", RoleApprover, []string{"web"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(info.Hash, tok) || info.Hash == "" {
		t.Errorf("TokenInfo.Hash %q must be a hash, not the secret", info.Hash)
	}
	pgtest.WaitFor(t, time.Second, "token verifies on the other replica", func() bool {
		p, ok := b.Verify(tok)
		return ok && p.TokenID == info.ID && p.Role == RoleApprover && slices.Equal(p.Channels, []string{"web"}) &&
			b.Active(info.ID) // verified from memory, not only through the table
	})
	if got := b.List(); len(got) != 1 || got[0].ID != info.ID || !got[0].Created.Equal(info.Created) {
		t.Errorf("List on the other replica = %+v, want just %+v", got, info)
	}
	if !b.Active(info.ID) || !b.Active("admin") || b.Active("tok_nope") {
		t.Error("Active: want true for the token and admin, false for an unknown id")
	}

	if err := b.Revoke(info.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Verify(tok); ok || revokedB.Load() != 1 {
		t.Errorf("on the revoking replica: verifies=%v hooks=%d, want false and 1", ok, revokedB.Load())
	}
	pgtest.WaitFor(t, time.Second, "revocation seen on the other replica", func() bool {
		_, ok := a.Verify(tok)
		return !ok && !a.Active(info.ID) && revokedA.Load() == 1
	})
	time.Sleep(100 * time.Millisecond)
	if n := revokedB.Load(); n != 1 {
		t.Errorf("the revoking replica's hooks ran %d times, want once", n)
	}
	for _, id := range []string{info.ID, "admin", "tok_unknown"} {
		if err := a.Revoke(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Revoke(%q) = %v, want ErrNotFound", id, err)
		}
	}
	if _, _, err := a.Create("x", "root", nil, nil); !errors.Is(err, ErrBadRole) {
		t.Errorf("Create with role root: %v, want ErrBadRole", err)
	}
	for _, bad := range []string{"", " ", tok, secret + "x"} {
		if _, ok := a.Verify(bad); ok {
			t.Errorf("Verify(%q) = ok", bad)
		}
	}
}

// TestTokensFirstStartRace: replicas starting together on one config dir
// make one admin token, and the file holds that one.
func TestTokensFirstStartRace(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	dir := t.TempDir()
	const replicas = 3
	dbs := make([]*pg.DB, replicas)
	for i := range dbs {
		dbs[i] = dbtest.Open(t, dsn)
	}
	var wg sync.WaitGroup
	toks := make([]*PGTokens, replicas)
	created := make([]bool, replicas)
	for i := range replicas {
		wg.Go(func() {
			var err error
			toks[i], created[i], err = OpenPGTokens(context.Background(), dbs[i], dir)
			if err != nil {
				t.Errorf("OpenPGTokens: %v", err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	n := 0
	for _, c := range created {
		if c {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d replicas created the admin token, want 1", n)
	}
	for i, tk := range toks {
		if _, err := tk.AdminToken(); err != nil {
			t.Errorf("replica %d: AdminToken: %v", i, err)
		}
	}
}

// TestTokensImportFileMode: a config dir from file mode brings its admin
// token and tokens.json into an empty database.
func TestTokensImportFileMode(t *testing.T) {
	dir := t.TempDir()
	admin := "0123456789abcdef0123"
	writeFile(t, dir, AdminTokenFile, admin+"\n")
	agent := "agent-secret-0123456789"
	list := []TokenInfo{{ID: "tok_old", Name: "old", Role: RoleAgent, Sessions: []string{"s1"},
		Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Hash: hashHex(agent)}}
	data, _ := json.Marshal(list)
	writeFile(t, dir, tokensFile, string(data))
	tk, created := openPGTokens(t, dbtest.Open(t, pgtest.NewDSN(t)), dir)
	if created {
		t.Error("created = true, want the file's admin token taken")
	}
	if p, ok := tk.Verify(admin); !ok || p.Role != RoleAdmin {
		t.Errorf("file's admin token: %+v, %v", p, ok)
	}
	if p, ok := tk.Verify(agent); !ok || p.TokenID != "tok_old" || !slices.Equal(p.Sessions, []string{"s1"}) {
		t.Errorf("imported token: %+v, %v", p, ok)
	}
	if got, err := tk.AdminToken(); err != nil || got != admin {
		t.Errorf("AdminToken = %q, %v", got, err)
	}
	writeFile(t, dir, AdminTokenFile, "ffffffffffffffffffffffff\n")
	if _, err := tk.AdminToken(); err == nil {
		t.Error("AdminToken with a file that is not the database's token: no error")
	}
}

// TestTokensReadThroughOnMiss: a token made on one replica verifies on
// another at once, before the notification reaches it (the miss reads the
// table), and a revoked or unknown token still does not.
func TestTokensReadThroughOnMiss(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	a, _ := openPGTokens(t, dbtest.Open(t, dsn), t.TempDir())
	b, _ := openPGTokens(t, dbtest.Open(t, dsn), t.TempDir())
	for i := range 20 {
		info, tok, err := a.Create(fmt.Sprintf("fresh-%d", i), RoleAgent, []string{"cli"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := b.Verify(tok)
		if !ok || p.TokenID != info.ID || p.Role != RoleAgent || !slices.Equal(p.Channels, []string{"cli"}) {
			t.Fatalf("token %d verified on the other replica right after it was made: %+v, %v", i, p, ok)
		}
		if err := a.Revoke(info.ID); err != nil {
			t.Fatal(err)
		}
		if _, ok := a.Verify(tok); ok {
			t.Fatalf("token %d verifies on the revoking replica after its revocation", i)
		}
		pgtest.WaitFor(t, time.Second, "revocation seen on the other replica", func() bool {
			_, ok := b.Verify(tok)
			return !ok
		})
	}
	if _, ok := b.Verify("tg_not_a_token"); ok {
		t.Error("an unknown token verified")
	}
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
