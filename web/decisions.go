package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/toolgate/toolgate/grant"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/decisionlog"
	"github.com/toolgate/toolgate/templates"
)

// DecisionReader is the decision log as the decisions page reads it.
type DecisionReader interface {
	Query(ctx context.Context, q decisionlog.Query) (decisionlog.Page, error)
	LevelSeries(ctx context.Context, q decisionlog.Query, n int) ([]decisionlog.LevelBucket, error)
}

// Chart layout.
const (
	chartBuckets = 24
	chartWidth   = 720.0
	chartHeight  = 160.0
	decisionPage = 100
)

// MountDecisions adds the decision log page, /decisions, behind the same
// session and headers as the other pages. log is nil when the decision log
// is off; the page then says so.
func (u *UI) MountDecisions(r chi.Router, log DecisionReader) {
	u.decisions = log
	if rd, ok := log.(RecentDecisions); ok && log != nil {
		u.recent = rd
	}
	r.Group(func(r chi.Router) {
		r.Use(securityHeaders, u.crossOrigin, withLang, u.requireSession)
		r.Get("/decisions", func(w http.ResponseWriter, r *http.Request) { u.decisionsPage(w, r, log) })
	})
}

func (u *UI) decisionsPage(w http.ResponseWriter, r *http.Request, log DecisionReader) {
	p := templates.DecisionsProps{Nav: u.nav(r, "/decisions")}
	if log == nil {
		p.Off = true
		render(w, r, http.StatusOK, templates.Decisions(p))
		return
	}
	v := r.URL.Query()
	p.Filter = templates.DecisionFilter{Tool: v.Get("tool"), Server: v.Get("server"), Level: v.Get("level"), Rule: v.Get("rule"),
		Session: v.Get("session"), Agent: v.Get("agent"), Since: localTime(v.Get("since")), Until: localTime(v.Get("until")), Range: v.Get("range")}
	p.Agents = decisionlog.Agents
	t := translatorFor(r.Context())
	q, err := decisionQuery(v, time.Now(), t)
	if err != nil {
		p.Error = err.Error()
		render(w, r, http.StatusBadRequest, templates.Decisions(p))
		return
	}
	page, err := log.Query(r.Context(), q)
	if err != nil {
		u.deps.Logger.Warn("decisions page", "err", err)
		p.Error = t("decisions.err.read")
		render(w, r, http.StatusInternalServerError, templates.Decisions(p))
		return
	}
	index := u.rulesByRef()
	eng := u.deps.Policy.Engine()
	var live []grant.Grant
	if u.deps.Grants != nil {
		live = u.deps.Grants.List()
	}
	for _, e := range page.Entries {
		row := decisionRow(e, index, eng, t)
		row.GrantID, row.GrantLive = grantOfDecision(e.MatchedRule, live)
		p.Rows = append(p.Rows, row)
	}
	if page.NextBefore > 0 {
		next := url.Values{}
		for k, vals := range v {
			if k != "cursor" {
				next[k] = vals
			}
		}
		next.Set("cursor", strconv.FormatInt(page.NextBefore, 10))
		p.NextURL = "/decisions?" + next.Encode()
	}
	series, err := log.LevelSeries(r.Context(), q, chartBuckets)
	if err != nil {
		u.deps.Logger.Warn("decisions chart", "err", err)
	}
	p.Chart = layoutChart(series, t)
	render(w, r, http.StatusOK, templates.Decisions(p))
}

// timePresets are the decisions page's quick ranges, by their key.
var timePresets = map[string]time.Duration{"15m": 15 * time.Minute, "1h": time.Hour, "24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour}

// localInput is the format of an <input type="datetime-local">; the page
// reads and shows it as UTC.
const localInput = "2006-01-02T15:04"

// parseTime reads an RFC 3339 time or a datetime-local value (UTC).
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{localInput, localInput + ":05"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time: %q", s)
}

// localTime shows a time filter in the date picker's format; a value it
// cannot read is shown as typed.
func localTime(s string) string {
	if t, err := parseTime(s); err == nil && s != "" {
		return t.UTC().Format(localInput)
	}
	return s
}

// decisionQuery reads the page's filters (service.DecisionFilters, with
// the date picker's format too, and a quick range when no since is given);
// a bad value is an error to show, in the page's language.
func decisionQuery(v url.Values, now time.Time, t translator) (decisionlog.Query, error) {
	q, err := service.DecisionFilters(v, parseTime)
	if err != nil {
		return q, filterError(err, v, t)
	}
	q.Limit = decisionPage
	if rg := v.Get("range"); rg != "" {
		d, ok := timePresets[rg]
		if !ok {
			return q, errors.New(t.f("decisions.err.range", rg))
		}
		if v.Get("since") == "" {
			q.Since = now.Add(-d)
		}
	}
	return q, nil
}

// filterError words a bad filter (the parameter service.DecisionFilters
// named) in the page's language.
func filterError(err error, v url.Values, t translator) error {
	var se *service.Error
	if !errors.As(err, &se) {
		return err
	}
	switch f := se.Field(); f {
	case "agent":
		return errors.New(t.f("decisions.err.agent", strings.Join(decisionlog.Agents, ", "), v.Get(f)))
	case "level":
		return errors.New(t.f("decisions.err.level", v.Get(f)))
	case "since", "until":
		return errors.New(t.f("decisions.err.time", f))
	case "cursor":
		return errors.New(t("decisions.err.cursor"))
	}
	return err
}

// chartLevels are stacked bottom to top.
var chartLevels = []string{"allow", "ask", "deny"}

// layoutChart turns level counts per bucket into stacked SVG bars.
func layoutChart(series []decisionlog.LevelBucket, t translator) templates.DecisionChart {
	c := templates.DecisionChart{Width: chartWidth, Height: chartHeight}
	if len(series) == 0 {
		return c
	}
	for _, b := range series {
		var sum int64
		for _, n := range b.Counts {
			sum += n
		}
		c.Total += sum
		c.Max = max(c.Max, sum)
	}
	slot := chartWidth / float64(len(series))
	for i, b := range series {
		x := float64(i) * slot
		y := chartHeight
		when := b.Start.UTC().Format(t("decisions.chart.datefmt"))
		for _, level := range chartLevels {
			n := b.Counts[level]
			if n == 0 || c.Max == 0 {
				continue
			}
			h := chartHeight * float64(n) / float64(c.Max)
			y -= h
			c.Bars = append(c.Bars, templates.ChartBar{X: x + 1, Y: y, W: slot - 2, H: h, Level: level,
				Title: t.f("decisions.chart.bar", level, when, n)})
		}
		if i%6 == 0 {
			c.Labels = append(c.Labels, templates.ChartLabel{X: x, Text: when})
		}
	}
	return c
}
