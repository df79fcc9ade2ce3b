// Package authtest holds the behaviour every auth.SessionStore must show,
// run by the tests of each implementation (memory, PostgreSQL).
package authtest

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/auth"
)

// SessionStore checks a store: other is a second store on the same storage
// (the same value for a store of one process), so that sessions, flashes
// and their deletion are seen across replicas. Expiry is checked with a
// one-second session.
func SessionStore(t *testing.T, s, other auth.SessionStore) {
	t.Helper()
	ctx := context.Background()
	p := auth.Principal{TokenID: "tok_1", Name: "ann", Role: auth.RoleApprover, Channels: []string{"web"}}
	id, se, err := s.Create(ctx, p, time.Hour)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if len(id) < 32 || len(se.CSRF) < 32 || id == se.CSRF {
		t.Errorf("Create: id %q csrf %q; want two distinct long random values", id, se.CSRF)
	}
	if d := time.Until(se.Expires); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("Create: expires in %v, want about an hour", d)
	}
	got, err := other.Get(ctx, id)
	if err != nil || got.Principal.Name != "ann" || got.Principal.TokenID != "tok_1" ||
		!slices.Equal(got.Principal.Channels, []string{"web"}) ||
		got.CSRF != se.CSRF || got.Expires.Sub(se.Expires).Abs() > 2*time.Second {
		t.Errorf("Get on the other store = %+v, %v; want %+v", got, err, se)
	}
	for _, bad := range []string{"", "nope", id + "x", id[:len(id)-1]} {
		if _, err := s.Get(ctx, bad); !errors.Is(err, auth.ErrNoSession) {
			t.Errorf("Get(%q) err = %v, want ErrNoSession", bad, err)
		}
	}
	checkFlash(t, s, other, id)
	checkDelete(t, s, other, id)
	checkExpiry(t, s, other, p)
}

func checkFlash(t *testing.T, s, other auth.SessionStore, id string) {
	t.Helper()
	ctx := context.Background()
	if err := s.SetFlash(ctx, id, auth.Flash{Kind: "ok", Text: "saved"}); err != nil {
		t.Fatalf("SetFlash: %v", err)
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
}

func checkDelete(t *testing.T, s, other auth.SessionStore, id string) {
	t.Helper()
	ctx := context.Background()
	var deleted atomic.Int64
	other.OnDelete(func() { deleted.Add(1) })
	if err := s.Delete(ctx, id); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := other.Get(ctx, id); !errors.Is(err, auth.ErrNoSession) {
		t.Errorf("Get after Delete: %v, want ErrNoSession", err)
	}
	waitUntil(t, "OnDelete on the other store", func() bool { return deleted.Load() >= 1 })
	if err := s.Delete(ctx, id); err != nil {
		t.Errorf("second Delete: %v, want nil", err)
	}
}

func checkExpiry(t *testing.T, s, other auth.SessionStore, p auth.Principal) {
	t.Helper()
	ctx := context.Background()
	short, _, err := s.Create(ctx, p, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, short); err != nil {
		t.Fatalf("Get of a fresh short session: %v", err)
	}
	time.Sleep(1100 * time.Millisecond)
	if _, err := other.Get(ctx, short); !errors.Is(err, auth.ErrNoSession) {
		t.Errorf("Get after expiry: %v, want ErrNoSession", err)
	}
	if _, err := other.TakeFlash(ctx, short); !errors.Is(err, auth.ErrNoSession) {
		t.Errorf("TakeFlash after expiry: %v, want ErrNoSession", err)
	}
	if err := other.SetFlash(ctx, short, auth.Flash{Kind: "ok"}); !errors.Is(err, auth.ErrNoSession) {
		t.Errorf("SetFlash after expiry: %v, want ErrNoSession", err)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%s: not within 5 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
