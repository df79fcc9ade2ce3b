package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestCompareAlternatesRounds: -against runs the GETs and the mix in turn,
// round by round on both transports, prints one line a round with a ratio
// and then the median of the ratios; it refuses -get, -batch and a round
// count below one.
func TestCompareAlternatesRounds(t *testing.T) {
	var gets, posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/healthz":
			gets.Add(1)
		case r.Method == http.MethodPost && r.URL.Path == "/api/v1/evaluate":
			posts.Add(1)
		case r.URL.Path == "/metrics":
			http.NotFound(w, r)
			return
		default:
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		noopHandler(w, r)
	}))
	defer srv.Close()
	for _, tr := range transports() {
		gets.Store(0)
		posts.Store(0)
		c := config{url: srv.URL, token: "tok", conns: 2, dur: 80 * time.Millisecond, mix: "benign,match",
			transport: tr, against: "/healthz", rounds: 3}
		var out strings.Builder
		if err := compare(&out, c); err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		text := out.String()
		if n := len(regexp.MustCompile(`(?m)^round \d: GET /healthz \d+ requests/s, mix benign,match \d+ requests/s, ratio \d+\.\d\d$`).FindAllString(text, -1)); n != 3 {
			t.Errorf("%s: %d round lines, want 3:\n%s", tr, n, text)
		}
		if !regexp.MustCompile(`(?m)^ratio over 3 rounds \(mix benign,match, 2 connections\): median \d+\.\d\d, least \d+\.\d\d, greatest \d+\.\d\d$`).MatchString(text) {
			t.Errorf("%s: no summary line:\n%s", tr, text)
		}
		if gets.Load() == 0 || posts.Load() == 0 {
			t.Errorf("%s: server saw %d GETs and %d evaluate POSTs, want both", tr, gets.Load(), posts.Load())
		}
	}
	for _, tc := range []struct {
		note string
		c    config
	}{
		{"with -get", config{against: "/healthz", get: "/healthz", rounds: 1}},
		{"with -batch", config{against: "/healthz", batch: 10, rounds: 1}},
		{"no rounds", config{against: "/healthz", rounds: 0}},
	} {
		if err := compare(&strings.Builder{}, tc.c); err == nil {
			t.Errorf("%s: got no error", tc.note)
		}
	}
}

// TestMedian: the middle value, or the mean of the two middle ones.
func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		note   string
		sorted []float64
		want   float64
	}{
		{"one", []float64{0.7}, 0.7},
		{"odd", []float64{0.5, 0.7, 0.9}, 0.7},
		{"even", []float64{0.5, 0.6, 0.8, 0.9}, 0.7},
	} {
		if got := median(tc.sorted); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("%s: median %v = %v, want %v", tc.note, tc.sorted, got, tc.want)
		}
	}
}
