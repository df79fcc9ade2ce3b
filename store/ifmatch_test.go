package store

import (
	"errors"
	"testing"
)

// TestIfMatchChecksUnderTheLock: a view made by IfMatch edits only when
// the section read under the lock still has the ETag, even when the
// store's memory has not seen a change another process made yet.
func TestIfMatchChecksUnderTheLock(t *testing.T) {
	a, dir := openFixture(t, "")
	b, err := Open(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, tag, _ := b.Section()
	b.stopWatch() // b's memory stays as it is: it does not see a's write
	b.wg.Wait()
	if _, err := a.SetToolLevel("grep", "deny"); err != nil {
		t.Fatal(err)
	}
	if _, memTag, _ := b.Section(); memTag != tag {
		t.Fatalf("b's memory changed (%s, was %s): the test cannot show the check", memTag, tag)
	}
	cases := []struct {
		note, tag string
		want      error
	}{
		{note: "stale tag, memory agrees with it", tag: tag, want: ErrPreconditionFailed},
		{note: "quoted stale tag", tag: `W/"` + tag + `"`, want: ErrPreconditionFailed},
	}
	for _, c := range cases {
		if _, err := b.IfMatch(c.tag).SetToolLevel("glob", "deny"); !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.note, err, c.want)
		}
	}
	if sec, _, _ := a.Section(); asLevel(sec, "glob") == "deny" {
		t.Error("a refused edit was written")
	}
	_, fresh, _ := a.Section()
	if _, err := b.IfMatch(`"`+fresh+`"`).SetToolLevel("glob", "deny"); err != nil {
		t.Errorf("current tag: %v, want the edit", err)
	}
	if _, err := b.IfMatch("*").SetToolLevel("list_dir", "deny"); err != nil {
		t.Errorf(`tag "*": %v, want the edit`, err)
	}
	sec, _, _ := b.Section()
	if asLevel(sec, "grep") != "deny" || asLevel(sec, "glob") != "deny" {
		t.Errorf("after the edits b holds tools %v; want a's grep and b's glob both deny", sec["tools"])
	}
}

func asLevel(sec map[string]any, tool string) string {
	tools, _ := sec["tools"].(map[string]any)
	l, _ := tools[tool].(string)
	return l
}
