package pg

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/auth"
)

// TestSessionsBehaveAsMemory runs one sequence of session operations on
// auth.MemorySessions and on PostgreSQL (made through one pool, read
// through another) and wants the same answers.
func TestSessionsBehaveAsMemory(t *testing.T) {
	dsn := newDSN(t)
	a, err := OpenSessions(context.Background(), openDB(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenSessions(context.Background(), openDB(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	mem := auth.NewMemorySessions(nil)
	for _, tc := range []struct {
		note        string
		write, read auth.SessionStore
	}{
		{"memory", mem, mem},
		{"postgres, two replicas", a, b},
	} {
		t.Run(tc.note, func(t *testing.T) { sessionSequence(t, tc.write, tc.read) })
	}
}

func sessionSequence(t *testing.T, s, other auth.SessionStore) {
	ctx := context.Background()
	p := auth.Principal{TokenID: "tok_1", Name: "ann", Role: auth.RoleApprover, Channels: []string{"web"}}
	start := time.Now()
	id, se, err := s.Create(ctx, p, time.Hour)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if len(id) < 32 || len(se.CSRF) < 32 || id == se.CSRF || se.Expires.Sub(start.Add(time.Hour)).Abs() > 5*time.Second {
		t.Errorf("Create = %q, %+v; want long distinct random id and CSRF, expiry in an hour", id, se)
	}
	got, err := other.Get(ctx, id)
	if err != nil || got.Principal.Name != "ann" || !slices.Equal(got.Principal.Channels, []string{"web"}) ||
		got.CSRF != se.CSRF || !got.Expires.Equal(se.Expires) {
		t.Errorf("Get on the other store = %+v, %v; want %+v", got, err, se)
	}
	for _, bad := range []string{"", "nope", id + "x"} {
		if _, err := other.Get(ctx, bad); !errors.Is(err, auth.ErrNoSession) {
			t.Errorf("Get(%q) = %v, want ErrNoSession", bad, err)
		}
	}
	if err := s.SetFlash(ctx, id, auth.Flash{Kind: "ok", Text: "saved"}); err != nil {
		t.Fatal(err)
	}
	if f, err := other.TakeFlash(ctx, id); err != nil || f != (auth.Flash{Kind: "ok", Text: "saved"}) {
		t.Errorf("TakeFlash on the other store = %+v, %v", f, err)
	}
	if f, err := s.TakeFlash(ctx, id); err != nil || f != (auth.Flash{}) {
		t.Errorf("second TakeFlash = %+v, %v; want empty", f, err)
	}
	if err := s.SetFlash(ctx, "nope", auth.Flash{Kind: "ok"}); !errors.Is(err, auth.ErrNoSession) {
		t.Errorf("SetFlash of an unknown id: %v, want ErrNoSession", err)
	}
	if _, err := s.TakeFlash(ctx, "nope"); !errors.Is(err, auth.ErrNoSession) {
		t.Errorf("TakeFlash of an unknown id: %v, want ErrNoSession", err)
	}
	if err := s.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, id); !errors.Is(err, auth.ErrNoSession) {
		t.Errorf("Get after Delete: %v, want ErrNoSession", err)
	}
	if err := s.Delete(ctx, id); err != nil {
		t.Errorf("Delete of an unknown id: %v, want nil", err)
	}
	short, _, err := s.Create(ctx, p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, short); err != nil {
		t.Fatalf("Get of a fresh one-second session: %v", err)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := other.Get(ctx, short); !errors.Is(err, auth.ErrNoSession) {
		t.Errorf("Get after expiry: %v, want ErrNoSession", err)
	}
	if err := other.SetFlash(ctx, short, auth.Flash{Kind: "ok"}); !errors.Is(err, auth.ErrNoSession) {
		t.Errorf("SetFlash after expiry: %v, want ErrNoSession", err)
	}
}

// TestSessionsSignOutReachesReplicas: a Delete through one replica calls
// the OnDelete hooks of another; the table never holds the session id.
func TestSessionsSignOutReachesReplicas(t *testing.T) {
	dsn := newDSN(t)
	dbA := openDB(t, dsn)
	a, err := OpenSessions(context.Background(), dbA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenSessions(context.Background(), openDB(t, dsn))
	if err != nil {
		t.Fatal(err)
	}
	var hooks atomic.Int64
	b.OnDelete(func() { hooks.Add(1) })
	// The resync after LISTEN calls the hooks once: wait for it, so the
	// count below is the notification's.
	waitFor(t, 5*time.Second, "resync hook after LISTEN", func() bool { return hooks.Load() >= 1 })
	ctx := context.Background()
	id, _, err := a.Create(ctx, auth.Principal{TokenID: "admin", Role: auth.RoleAdmin}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := dbA.pool.QueryRow(ctx, "SELECT count(*) FROM auth_sessions WHERE position($1 in encode(id_hash, 'hex') || principal::text || csrf) > 0", id).Scan(&n); err != nil || n != 0 {
		t.Errorf("rows holding the session id: %d (%v), want 0", n, err)
	}
	before := hooks.Load()
	if err := a.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, "OnDelete on the other replica", func() bool { return hooks.Load() > before })
}
