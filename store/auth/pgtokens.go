package auth

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/toolgate/toolgate/store/atomicfile"
	"github.com/toolgate/toolgate/store/pg"
)

// PGTokens are the bearer tokens in PostgreSQL, with the method set of
// Tokens (the token file). Verify and Active answer from memory (a request never waits
// for the database, and tokens keep working while it is away); the memory
// is reloaded on every pg.ChannelTokens notification and after every
// reconnect, so a token created or revoked through any replica counts on
// all of them. It is safe for concurrent use.
type PGTokens struct {
	db  *pg.DB
	dir string

	// writeMu orders reloads and this replica's own writes, so that a
	// reload that read the table before a write cannot undo the write's
	// update of the memory.
	writeMu sync.Mutex
	mu      sync.RWMutex
	admin   [32]byte
	byHash  map[[32]byte]TokenInfo
	list    []TokenInfo // without the admin token, oldest first
	// revoked are told after a token ended, on whichever replica.
	revoked []func()
	// retrying is set while a reload that failed waits to run again.
	retrying atomic.Bool
	// lookups holds a slot per database look-up of an unknown token.
	lookups chan struct{}
}

// OpenPGTokens migrates pg.PartAuth and loads the tokens. When the database has
// no admin token yet, it takes the one of <dir>/api_token, or makes one and
// writes it there (mode 0600) as the file store does at first start;
// created reports the latter. The first admin token also brings the
// file-mode tokens.json along. Of replicas starting together one makes
// the admin token.
func OpenPGTokens(ctx context.Context, db *pg.DB, dir string) (t *PGTokens, created bool, err error) {
	if err := pg.MigrateParts(ctx, db, pg.PartAuth); err != nil {
		return nil, false, err
	}
	t = &PGTokens{db: db, dir: dir, lookups: make(chan struct{}, maxTokenLookups)}
	if created, err = t.ensureAdmin(ctx); err != nil {
		return nil, false, err
	}
	if err := t.reload(ctx); err != nil {
		return nil, false, err
	}
	db.Listener().Subscribe(pg.ChannelTokens, t.notified, t.refresh)
	return t, created, nil
}

// ensureAdmin stores an admin token when there is none; see OpenPGTokens.
func (t *PGTokens) ensureAdmin(ctx context.Context) (created bool, err error) {
	path := filepath.Join(t.dir, AdminTokenFile)
	secret, err := readAdminFile(path)
	if err != nil {
		return false, err
	}
	fresh := secret == ""
	if fresh {
		if secret, err = NewSecret(); err != nil {
			return false, err
		}
	}
	err = pgx.BeginFunc(ctx, t.db.Pool(), func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO auth_tokens (id, name, role, hash) VALUES ($1, $1, $2, $3)
			ON CONFLICT (id) DO NOTHING`, adminID, RoleAdmin, hashHex(secret))
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		if err := importTokensFile(ctx, tx, t.dir); err != nil {
			return err
		}
		if fresh {
			// Written inside the transaction: if the file cannot be
			// written, no admin token exists that nobody knows.
			if err := os.MkdirAll(t.dir, 0o700); err != nil {
				return fmt.Errorf("write admin token: %w", err)
			}
			if err := atomicfile.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
				return fmt.Errorf("write admin token: %w", err)
			}
			created = true
		}
		return nil
	})
	if err != nil {
		return false, t.db.Wrap(ctx, err, "admin token")
	}
	return created, nil
}

// readAdminFile returns the token of api_token, "" when there is none.
func readAdminFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read admin token: %w", err)
	}
	s := strings.TrimSpace(string(data))
	if len(s) < 16 {
		return "", fmt.Errorf("%s: the admin token is shorter than 16 characters", path)
	}
	return s, nil
}

// importTokensFile copies the hashed tokens of a file-mode tokens.json.
func importTokensFile(ctx context.Context, tx pgx.Tx, dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, tokensFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("import %s: %w", tokensFile, err)
	}
	var list []TokenInfo
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("import %s: %w", tokensFile, err)
	}
	for _, ti := range list {
		if _, err := tx.Exec(ctx, `INSERT INTO auth_tokens (id, name, role, channels, sessions, hash, created)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
			ti.ID, ti.Name, ti.Role, nonNil(ti.Channels), nonNil(ti.Sessions), ti.Hash, ti.Created); err != nil {
			return fmt.Errorf("import %s: %w", tokensFile, err)
		}
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// notified handles a pg.ChannelTokens notification: a revocation it names
// ends that token here at once, from the payload alone, so that a reload
// that fails cannot keep a revoked token working; then everything reloads.
func (t *PGTokens) notified(payload string) {
	if id, ok := strings.CutPrefix(payload, "revoke "); ok && id != adminID {
		t.writeMu.Lock()
		hooks := t.forget(id)
		t.writeMu.Unlock()
		for _, f := range hooks {
			f()
		}
	}
	t.refresh()
}

// Backoff of the retries of a reload that failed.
const (
	tokensRetryMin = 250 * time.Millisecond
	tokensRetryMax = 5 * time.Second
)

// refresh reloads after a notification or reconnect. A failure is logged
// and retried with backoff until a reload succeeds (or the DB is closed):
// no later notification may come to correct what the memory missed.
func (t *PGTokens) refresh() {
	if err := t.reload(context.Background()); err != nil {
		t.db.Log().Warn("pg tokens: reload failed; keeping the tokens in memory and retrying", "err", err)
		if t.retrying.CompareAndSwap(false, true) {
			go t.retry()
		}
	}
}

// retry reloads with backoff until a reload succeeds or the DB is closed.
func (t *PGTokens) retry() {
	defer t.retrying.Store(false)
	for wait := tokensRetryMin; ; wait = min(2*wait, tokensRetryMax) {
		select {
		case <-t.db.Done():
			return
		case <-time.After(wait):
		}
		if err := t.reload(context.Background()); err == nil {
			return
		}
	}
}

// reload reads every token and tells the OnRevoke hooks when one is gone.
func (t *PGTokens) reload(ctx context.Context) error {
	hooks, err := t.load(ctx)
	// The hooks run after the lock is released: they may verify tokens.
	for _, f := range hooks {
		f()
	}
	return err
}

// load reads every token into memory and returns the OnRevoke hooks to
// call when one is gone.
func (t *PGTokens) load(ctx context.Context) ([]func(), error) {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	octx, cancel := t.db.Op(ctx)
	defer cancel()
	rows, err := t.db.Pool().Query(octx, "SELECT id, name, role, channels, sessions, hash, created FROM auth_tokens ORDER BY created, id")
	if err != nil {
		return nil, t.db.Wrap(ctx, err, "load tokens")
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TokenInfo, error) {
		var ti TokenInfo
		err := r.Scan(&ti.ID, &ti.Name, &ti.Role, &ti.Channels, &ti.Sessions, &ti.Hash, &ti.Created)
		ti.Created = ti.Created.UTC()
		return ti, err
	})
	if err != nil {
		return nil, t.db.Wrap(ctx, err, "load tokens")
	}
	return t.swap(list), nil
}

// swap installs list and returns the hooks to call when a token of the old
// list is missing from it.
func (t *PGTokens) swap(list []TokenInfo) []func() {
	byHash := make(map[[32]byte]TokenInfo, len(list))
	var admin [32]byte
	others := make([]TokenInfo, 0, len(list))
	for _, ti := range list {
		var h [32]byte
		if b, err := hex.DecodeString(ti.Hash); err == nil && len(b) == 32 {
			copy(h[:], b)
		}
		if ti.ID == adminID {
			admin = h
			continue
		}
		byHash[h] = ti
		others = append(others, ti)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	gone := false
	for _, old := range t.list {
		if !slices.ContainsFunc(others, func(ti TokenInfo) bool { return ti.ID == old.ID }) {
			gone = true
		}
	}
	t.admin, t.byHash, t.list = admin, byHash, others
	if gone {
		return slices.Clone(t.revoked)
	}
	return nil
}

// OnRevoke registers f to be called after a token is revoked through any
// replica (here: after Revoke; elsewhere: once the notification arrives).
func (t *PGTokens) OnRevoke(f func()) {
	t.mu.Lock()
	t.revoked = append(t.revoked, f)
	t.mu.Unlock()
}

// Verify returns the principal of a token; ok is false for an unknown one.
func (t *PGTokens) Verify(token string) (Principal, bool) {
	h, ok := tokenHash(token)
	if !ok {
		return Principal{}, false
	}
	t.mu.RLock()
	if t.admin != ([32]byte{}) && subtle.ConstantTimeCompare(h[:], t.admin[:]) == 1 {
		t.mu.RUnlock()
		return adminPrincipal, true
	}
	// A map keyed by the hash: its timing tells about the hash of the
	// caller's own guess only, which does not help find a token.
	ti, ok := t.byHash[h]
	t.mu.RUnlock()
	if !ok {
		// A token made on another replica a moment ago is in the table
		// before its notification reaches this one's memory.
		if ti, ok = t.lookup(h); !ok {
			return Principal{}, false
		}
	}
	return ti.principal(), true
}

// maxTokenLookups bounds the database look-ups of unknown tokens running
// at once, so that a flood of wrong tokens cannot take the pool: beyond it
// an unknown token is refused without asking (it fails closed).
const maxTokenLookups = 4

// lookup reads the token whose hash is h from the table: the read-through
// of a miss in memory. The answer is not kept: the memory changes only by
// reloads, so a look-up racing a revocation cannot bring a revoked token
// back. A database that does not answer in time is a miss.
func (t *PGTokens) lookup(h [32]byte) (TokenInfo, bool) {
	select {
	case t.lookups <- struct{}{}:
		defer func() { <-t.lookups }()
	default:
		return TokenInfo{}, false
	}
	ctx, cancel := t.db.Op(context.Background())
	defer cancel()
	var ti TokenInfo
	err := t.db.Pool().QueryRow(ctx, "SELECT id, name, role, channels, sessions FROM auth_tokens WHERE hash = $1 AND id <> $2",
		hex.EncodeToString(h[:]), adminID).Scan(&ti.ID, &ti.Name, &ti.Role, &ti.Channels, &ti.Sessions)
	return ti, err == nil
}

// Active reports whether a token id still exists (the admin token always).
func (t *PGTokens) Active(tokenID string) bool {
	if tokenID == adminID {
		return true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.ContainsFunc(t.list, func(ti TokenInfo) bool { return ti.ID == tokenID })
}

// List returns the tokens other than the admin token, without secrets.
func (t *PGTokens) List() []TokenInfo {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return slices.Clone(t.list)
}

// Create makes a token and returns it with its secret; only the hash is
// stored. A database error wraps store.ErrUnavailable when it is away.
func (t *PGTokens) Create(name, role string, channels, sessions []string) (TokenInfo, string, error) {
	info, secret, err := newToken(name, role, channels, sessions)
	if err != nil {
		return TokenInfo{}, "", err
	}
	ctx := context.Background()
	octx, cancel := t.db.Op(ctx)
	defer cancel()
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	err = pgx.BeginFunc(octx, t.db.Pool(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(octx, `INSERT INTO auth_tokens (id, name, role, channels, sessions, hash, created)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, info.ID, name, role, nonNil(channels), nonNil(sessions), info.Hash, info.Created); err != nil {
			return err
		}
		_, err := tx.Exec(octx, "SELECT pg_notify($1, $2)", pg.ChannelTokens, "create "+info.ID)
		return err
	})
	if err != nil {
		return TokenInfo{}, "", t.db.Wrap(ctx, err, "create token")
	}
	t.mu.Lock()
	var h [32]byte
	b, _ := hex.DecodeString(info.Hash)
	copy(h[:], b)
	t.byHash[h] = info
	t.list = append(slices.Clone(t.list), info)
	t.mu.Unlock()
	return info, secret, nil
}

// Revoke deletes a token by id (ErrNotFound when there is none; the
// admin token cannot be revoked) and tells every replica.
func (t *PGTokens) Revoke(id string) error {
	if id == adminID {
		return ErrNotFound
	}
	ctx := context.Background()
	octx, cancel := t.db.Op(ctx)
	defer cancel()
	t.writeMu.Lock()
	err := pgx.BeginFunc(octx, t.db.Pool(), func(tx pgx.Tx) error {
		tag, err := tx.Exec(octx, "DELETE FROM auth_tokens WHERE id = $1", id)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		_, err = tx.Exec(octx, "SELECT pg_notify($1, $2)", pg.ChannelTokens, "revoke "+id)
		return err
	})
	var hooks []func()
	if err == nil {
		hooks = t.forget(id)
	}
	t.writeMu.Unlock()
	if errors.Is(err, ErrNotFound) {
		return err
	}
	if err != nil {
		return t.db.Wrap(ctx, err, "revoke token")
	}
	for _, f := range hooks {
		f()
	}
	return nil
}

// forget drops token id from memory and returns the hooks to call (none
// when it was not there, so a revocation runs them once per replica).
func (t *PGTokens) forget(id string) []func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !slices.ContainsFunc(t.list, func(ti TokenInfo) bool { return ti.ID == id }) {
		// Already gone: the revoking replica hears its own notification
		// after Revoke forgot the token, and its hooks ran then.
		return nil
	}
	t.list = slices.DeleteFunc(slices.Clone(t.list), func(ti TokenInfo) bool { return ti.ID == id })
	maps.DeleteFunc(t.byHash, func(_ [32]byte, ti TokenInfo) bool { return ti.ID == id })
	return slices.Clone(t.revoked)
}

// AdminToken reads the admin token from this replica's api_token, for
// printing the admin URL; it is an error when that file is missing or does
// not hold the database's admin token.
func (t *PGTokens) AdminToken() (string, error) {
	secret, err := readAdminFile(filepath.Join(t.dir, AdminTokenFile))
	if err != nil {
		return "", err
	}
	if secret == "" {
		return "", fmt.Errorf("pg: no %s in %s: %w", AdminTokenFile, t.dir, fs.ErrNotExist)
	}
	if p, ok := t.Verify(secret); !ok || p.TokenID != adminID {
		return "", fmt.Errorf("pg: %s in %s is not this database's admin token", AdminTokenFile, t.dir)
	}
	return secret, nil
}
