package service_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/toolgate/toolgate/service"
)

// TestDecisionFilters: the filters both doors share read what they name,
// and a bad value is invalid, naming its parameter.
func TestDecisionFilters(t *testing.T) {
	cases := []struct {
		note, query, field string
	}{
		{"every filter", "tool=bash&server=fs&rule=git&session=s1&agent=codex&level=DENY&since=2026-01-02T15:04:05Z&until=2026-01-03T00:00:00Z&cursor=42", ""},
		{"an unknown agent", "agent=nobody", "agent"},
		{"a level that is not one", "level=maybe", "level"},
		{"a since it cannot read", "since=yesterday", "since"},
		{"an until it cannot read", "until=2026-13-01T00:00:00Z", "until"},
		{"a cursor below one", "cursor=0", "cursor"},
		{"a cursor that is not a number", "cursor=abc", "cursor"},
	}
	for _, c := range cases {
		v, _ := url.ParseQuery(c.query)
		q, err := service.DecisionFilters(v, service.RFC3339)
		if c.field == "" {
			want := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
			if err != nil || q.Tool != "bash" || q.Server != "fs" || q.Rule != "git" || q.Session != "s1" || q.Agent != "codex" ||
				q.Level != "deny" || !q.Since.Equal(want) || q.Until.IsZero() || q.Before != 42 {
				t.Errorf("%s: %+v %v", c.note, q, err)
			}
			continue
		}
		if e := service.Classify(err); e.Kind != service.KindInvalid || e.Field() != c.field {
			t.Errorf("%s: %v (kind %d, field %q), want an invalid value naming %s", c.note, err, e.Kind, e.Field(), c.field)
		}
	}
}
