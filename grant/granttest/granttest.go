// Package granttest holds the tests every grant.Store must pass, run by
// store/grants on SQLite and on PostgreSQL, so both keep grants
// alike. It owns no storage of its own.
package granttest

import (
	"context"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/policy"
)

// Sample is a valid session grant created at created, expiring after ttl.
func Sample(id string, created time.Time, ttl time.Duration) grant.Grant {
	return grant.Grant{ID: id, ToolName: "bash", Scope: grant.ScopeSession, MatchType: "command", Pattern: "npm test",
		SessionID: "s1", TokenID: "tok_agent", ChannelID: "web", Workspace: "/ws", Agent: "claude-code", Summary: "npm test",
		ApprovalID: "a1", GrantedBy: "ana", CreatedAt: created.UTC().Truncate(time.Millisecond),
		ExpiresAt: created.Add(ttl).UTC().Truncate(time.Millisecond)}
}

// Conformance runs the store tests on a fresh store from open.
func Conformance(t *testing.T, open func(t *testing.T) grant.Store) {
	ctx := context.Background()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	t.Run("a grant reads back as it was stored", func(t *testing.T) {
		st := open(t)
		g := Sample("g1", now, time.Hour)
		digest := Sample("g2", now.Add(time.Millisecond), 30*time.Second)
		digest.Scope, digest.MatchType, digest.Pattern, digest.ArgsDigest, digest.SessionID = grant.ScopeTimed, "", "", "ab12", ""
		for _, x := range []grant.Grant{g, digest} {
			if err := st.AddGrant(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		got, err := st.LiveGrants(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, []grant.Grant{g, digest}) {
			t.Errorf("got %+v\nwant %+v", got, []grant.Grant{g, digest})
		}
	})
	t.Run("oldest first, expired never", func(t *testing.T) {
		st := open(t)
		for _, g := range []grant.Grant{Sample("late", now.Add(2*time.Second), time.Hour),
			Sample("early", now, time.Hour), Sample("gone", now.Add(-time.Hour), time.Hour), Sample("edge", now.Add(-time.Hour), time.Hour+time.Second)} {
			if err := st.AddGrant(ctx, g); err != nil {
				t.Fatal(err)
			}
		}
		got, err := st.LiveGrants(ctx, now.Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if ids := idsOf(got); !reflect.DeepEqual(ids, []string{"early", "late"}) {
			t.Errorf("live at now+1s: %v, want early, late (gone and edge expired at or before it)", ids)
		}
	})
	t.Run("revoke returns the grant once", func(t *testing.T) {
		st := open(t)
		g := Sample("g1", now, time.Hour)
		if err := st.AddGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
		got, err := st.RevokeGrant(ctx, "g1")
		if err != nil || !reflect.DeepEqual(got, g) {
			t.Fatalf("revoke: %+v %v", got, err)
		}
		if _, err := st.RevokeGrant(ctx, "g1"); !errors.Is(err, grant.ErrNotFound) {
			t.Errorf("second revoke: %v, want grant.ErrNotFound", err)
		}
		if live, _ := st.LiveGrants(ctx, now); len(live) != 0 {
			t.Errorf("a revoked grant is still live: %v", idsOf(live))
		}
	})
	t.Run("times read back to the millisecond, in UTC", func(t *testing.T) {
		st := open(t)
		g := Sample("g1", now, time.Hour)
		zone := time.FixedZone("UTC+8", 8*3600)
		g.CreatedAt = now.Add(1234567 * time.Nanosecond).In(zone)
		g.ExpiresAt = g.CreatedAt.Add(time.Hour + 999*time.Microsecond)
		if err := st.AddGrant(ctx, g); err != nil {
			t.Fatal(err)
		}
		got, err := st.LiveGrants(ctx, now)
		if err != nil || len(got) != 1 {
			t.Fatalf("live: %v %v", idsOf(got), err)
		}
		want := [2]time.Time{g.CreatedAt.UTC().Truncate(time.Millisecond), g.ExpiresAt.UTC().Truncate(time.Millisecond)}
		if have := [2]time.Time{got[0].CreatedAt, got[0].ExpiresAt}; have != want {
			t.Errorf("created_at, expires_at read back as %v, want %v", have, want)
		}
	})
	t.Run("an id is stored once", func(t *testing.T) {
		st := open(t)
		if err := st.AddGrant(ctx, Sample("g1", now, time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := st.AddGrant(ctx, Sample("g1", now, time.Hour)); err == nil {
			t.Error("a second grant with the same id was stored")
		}
	})
}

func idsOf(list []grant.Grant) []string {
	out := []string{}
	for _, g := range list {
		out = append(out, g.ID)
	}
	return out
}

// Engine compiles a policy that asks for every shell command, so that
// only a grant allows one, with workspace ws.
func Engine(t testing.TB, ws string) *engine.Engine {
	t.Helper()
	e, problems := engine.Compile(map[string]any{"enabled": true, "schema": "tiered_policy",
		"defaults": map[string]any{"*": "ask"}, "tools": map[string]any{"bash": "ask"}}, nil, engine.Options{Workspace: ws})
	if len(problems) != 0 {
		t.Fatalf("problems: %v", problems)
	}
	return e
}

// Level is what e decides for command in session on the web channel.
func Level(e *engine.Engine, command, session string) policy.Level {
	return e.Evaluate(&engine.Request{Call: engine.NewCall("bash", map[string]any{"command": command}), ChannelID: "web", SessionID: session, TokenID: "tok_agent"}).Level
}

// BookFollowsItsStore checks a Book over st: a grant it adds decides at
// once, a revoked one never again, an expired one from the second it
// expires (the clock, not a reload).
func BookFollowsItsStore(t *testing.T, st grant.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var clock Clock
	clock.Set(time.Now().UTC())
	book := grant.NewBook(st, grant.Options{Now: clock.Now})
	if err := book.Start(ctx); err != nil {
		t.Fatal(err)
	}
	base := Engine(t, "/ws")
	now := clock.Now()
	bad := Sample("", now, time.Minute)
	bad.ExpiresAt = time.Time{}
	if _, err := book.Add(ctx, bad); !errors.Is(err, grant.ErrInvalid) {
		t.Errorf("a grant without an expiry: %v, want grant.ErrInvalid", err)
	}
	if live, err := st.LiveGrants(ctx, now); err != nil || len(live) != 0 {
		t.Errorf("a refused grant was stored: %v %v", idsOf(live), err)
	}
	g := Sample("", now, time.Minute)
	g.Workspace = base.GrantWorkspace(&engine.Request{})
	made, err := book.Add(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if lvl := Level(book.Engine(base), "npm test", "s1"); lvl != policy.Allow {
		t.Fatalf("a grant just added: %s", lvl)
	}
	if lvl := Level(book.Engine(base), "npm test", "s2"); lvl != policy.Ask {
		t.Errorf("a session grant in another session: %s", lvl)
	}
	clock.Set(now.Add(time.Minute))
	if lvl := Level(book.Engine(base), "npm test", "s1"); lvl != policy.Ask {
		t.Errorf("a grant at its expiry: %s", lvl)
	}
	clock.Set(now.Add(time.Minute - time.Second))
	if _, err := book.Revoke(ctx, made.ID); err != nil {
		t.Fatal(err)
	}
	if lvl := Level(book.Engine(base), "npm test", "s1"); lvl != policy.Ask {
		t.Errorf("a revoked grant: %s", lvl)
	}
}

// Clock is a clock a test sets, safe to read from a Book's goroutines
// (its reloads read it while the test moves it).
type Clock struct{ ns atomic.Int64 }

// Now is the time last set.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }
