package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/toolgate/toolgate/internal/callbacks"
)

// ErrNoSession is returned for a session id that does not exist or has
// expired.
var ErrNoSession = errors.New("auth: no such session")

// Session is one signed-in browser as a SessionStore keeps it: who it acts
// as, the CSRF token its forms must carry and when it ends.
type Session struct {
	Principal Principal
	CSRF      string
	Expires   time.Time
}

// Flash is a one-time message shown on a session's next page.
type Flash struct {
	// Kind is "ok" or "error".
	Kind string
	Text string
}

// SessionStore keeps browser sessions by id, the random value of the
// session cookie. MemorySessions keeps them in this process; PGSessions keeps
// them in PostgreSQL (keyed by a hash of the id), so that a browser signed
// in through one replica is known to every replica behind the load
// balancer. An error that means the database cannot be reached wraps
// store.ErrUnavailable; callers treat the session as absent then (fail
// closed).
type SessionStore interface {
	// Create starts a session for p lasting ttl, with a new random id and
	// CSRF token, and returns both.
	Create(ctx context.Context, p Principal, ttl time.Duration) (string, Session, error)
	// Get returns the live session id, or ErrNoSession.
	Get(ctx context.Context, id string) (Session, error)
	// Delete ends session id; an unknown id is not an error.
	Delete(ctx context.Context, id string) error
	// SetFlash keeps f for the session's next page (ErrNoSession if none).
	SetFlash(ctx context.Context, id string, f Flash) error
	// TakeFlash returns the session's message and clears it.
	TakeFlash(ctx context.Context, id string) (Flash, error)
	// OnDelete registers f to be called after any session was deleted (by
	// any replica, for a shared store), so that holders of long-lived
	// connections re-check theirs.
	OnDelete(f func())
}

// NewSessionID returns 32 random bytes as hex: a session id or CSRF token.
func NewSessionID() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// MemorySessions is the SessionStore of a single process: a map under a
// mutex. Expired sessions are swept on every Create. Its methods fail only
// with ErrNoSession.
type MemorySessions struct {
	now     func() time.Time
	mu      sync.Mutex
	m       map[string]*memSession
	deleted callbacks.List
}

type memSession struct {
	Session
	flash Flash
}

var _ SessionStore = (*MemorySessions)(nil)

// NewMemorySessions returns an empty in-memory store whose clock is now
// (nil: time.Now).
func NewMemorySessions(now func() time.Time) *MemorySessions {
	if now == nil {
		now = time.Now
	}
	return &MemorySessions{now: now, m: map[string]*memSession{}}
}

// Create starts a session for p lasting ttl.
func (m *MemorySessions) Create(_ context.Context, p Principal, ttl time.Duration) (string, Session, error) {
	id := NewSessionID()
	se := Session{Principal: p, CSRF: NewSessionID(), Expires: m.now().Add(ttl)}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	for k, old := range m.m {
		if !now.Before(old.Expires) {
			delete(m.m, k)
		}
	}
	m.m[id] = &memSession{Session: se}
	return id, se, nil
}

// live returns session id unless it is missing or expired (then it is
// forgotten). m.mu must be held.
func (m *MemorySessions) live(id string) (*memSession, bool) {
	se, ok := m.m[id]
	if !ok {
		return nil, false
	}
	if !m.now().Before(se.Expires) {
		delete(m.m, id)
		return nil, false
	}
	return se, true
}

// Get returns the live session id.
func (m *MemorySessions) Get(_ context.Context, id string) (Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	se, ok := m.live(id)
	if !ok {
		return Session{}, ErrNoSession
	}
	return se.Session, nil
}

// Delete ends session id and then calls the OnDelete hooks.
func (m *MemorySessions) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	_, existed := m.m[id]
	delete(m.m, id)
	m.mu.Unlock()
	if existed {
		m.deleted.Call()
	}
	return nil
}

// SetFlash keeps f for the session's next page.
func (m *MemorySessions) SetFlash(_ context.Context, id string, f Flash) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	se, ok := m.live(id)
	if !ok {
		return ErrNoSession
	}
	se.flash = f
	return nil
}

// TakeFlash returns and clears the session's message.
func (m *MemorySessions) TakeFlash(_ context.Context, id string) (Flash, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	se, ok := m.live(id)
	if !ok {
		return Flash{}, ErrNoSession
	}
	f := se.flash
	se.flash = Flash{}
	return f, nil
}

// OnDelete registers f to be called after each Delete of a session.
func (m *MemorySessions) OnDelete(f func()) { m.deleted.Add(f) }

// Len is the number of sessions held, expired ones not yet swept included.
func (m *MemorySessions) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.m)
}
