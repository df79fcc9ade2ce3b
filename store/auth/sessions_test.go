package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolgate/toolgate/store/auth"
	"github.com/toolgate/toolgate/store/auth/authtest"
)

func TestMemorySessions(t *testing.T) {
	s := auth.NewMemorySessions(nil)
	authtest.SessionStore(t, s, s)
}

// TestMemorySessionsSweep: Create drops sessions that have expired, so an
// idle server does not keep every session ever made.
func TestMemorySessionsSweep(t *testing.T) {
	now := time.Now()
	s := auth.NewMemorySessions(func() time.Time { return now })
	ctx := context.Background()
	for range 3 {
		if _, _, err := s.Create(ctx, auth.Principal{Name: "a"}, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Minute)
	id, _, _ := s.Create(ctx, auth.Principal{Name: "b"}, time.Minute)
	if got := s.Len(); got != 1 {
		t.Errorf("after expiry and one Create: %d sessions held, want 1", got)
	}
	if se, err := s.Get(ctx, id); err != nil || se.Principal.Name != "b" {
		t.Errorf("Get of the new session = %+v, %v", se, err)
	}
}
