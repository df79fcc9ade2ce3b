package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/policy"
)

// TestUpdate: a transaction reads the document under the lock and writes
// what it staged; an error from its function writes nothing; an IfMatch
// view refuses a stale ETag before the function runs.
func TestUpdate(t *testing.T) {
	s, dir := openFixture(t, "config.yaml")
	path := filepath.Join(dir, ConfigFile)
	before := readFile(t, path)
	etag := s.ETag()
	override := policy.Override{ID: "tx_test", Tools: []string{"bash"}, MatchType: "command", Pattern: "make tx", Action: policy.Allow}

	boom := errors.New("boom")
	_, err := s.Update(context.Background(), func(tx *Tx) error {
		if !tx.InForce() {
			t.Errorf("InForce: false on the document the policy in force was loaded from")
		}
		if _, err := tx.AddApprovalOverride(override); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || string(readFile(t, path)) != string(before) || s.ETag() != etag {
		t.Fatalf("aborted update: err %v, file changed %v, etag changed %v; want boom and nothing written", err,
			string(readFile(t, path)) != string(before), s.ETag() != etag)
	}

	ran := false
	_, err = s.IfMatch("stale").Update(context.Background(), func(tx *Tx) error { ran = true; return nil })
	if !errors.Is(err, ErrPreconditionFailed) || ran {
		t.Errorf("stale If-Match: err %v, function ran %v; want ErrPreconditionFailed before it runs", err, ran)
	}

	tag, err := s.IfMatch(etag).Update(context.Background(), func(tx *Tx) error {
		existing, err := tx.AddApprovalOverride(override)
		if existing != nil {
			t.Errorf("a new override was found existing: %v", existing)
		}
		return err
	})
	if err != nil || tag == etag || tag != s.ETag() || !strings.Contains(string(readFile(t, path)), "id: tx_test") {
		t.Fatalf("update: tag %q (was %q, in force %q), err %v; want the override written under a new ETag", tag, etag, s.ETag(), err)
	}

	_, err = s.Update(context.Background(), func(tx *Tx) error {
		existing, err := tx.AddApprovalOverride(policy.Override{ID: "other_id", Tools: []string{"bash"}, MatchType: "command",
			Pattern: "make tx", Action: policy.Allow})
		if err != nil {
			return err
		}
		if existing == nil || existing.ID != "tx_test" {
			t.Errorf("same tool, match type and pattern: existing %v, want tx_test", existing)
		}
		return errNothing
	})
	if !errors.Is(err, errNothing) || strings.Count(string(readFile(t, path)), "pattern: make tx") != 1 {
		t.Errorf("unchanged: err %v; want errNothing and one override", err)
	}
}

// TestUpdateReadsTheDocumentOnDisk: a transaction sees an edit made
// elsewhere even before the store has loaded it.
func TestUpdateReadsTheDocumentOnDisk(t *testing.T) {
	s, dir := openFixture(t, "config.yaml")
	path := filepath.Join(dir, ConfigFile)
	raw := strings.Replace(string(readFile(t, path)), "permissions:", "permissions:\n  deny_guidance_message: edited elsewhere", 1)
	if err := os.WriteFile(path, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Update(context.Background(), func(tx *Tx) error {
		if got := tx.Section().DenyGuidance; got != "edited elsewhere" {
			t.Errorf("Section: deny_guidance_message %v, want the text on disk", got)
		}
		return errNothing
	})
	if !errors.Is(err, errNothing) {
		t.Errorf("got %v, want errNothing", err)
	}
}

// errNothing ends a test transaction that writes nothing.
var errNothing = errors.New("nothing to write")
