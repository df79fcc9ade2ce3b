package main

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseResponse(t *testing.T) {
	cases := []struct {
		note, in string
		code     int
		bad      bool
	}{
		{note: "content length", in: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", code: 200},
		{note: "header case and spaces", in: "HTTP/1.1 403 Forbidden\r\ncontent-length:  2 \r\n\r\nno", code: 403},
		{note: "chunked with extension and trailer", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: v\r\n\r\n", code: 200},
		{note: "empty chunked body", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", code: 200},
		{note: "no length", in: "HTTP/1.1 200 OK\r\n\r\n", bad: true},
		{note: "negative length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", bad: true},
		{note: "not HTTP", in: "SSH-2.0-OpenSSH\r\n\r\n", bad: true},
		{note: "bad chunk size", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", bad: true},
		{note: "chunk without CRLF", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", bad: true},
	}
	for _, tc := range cases {
		size, code, err := parseResponse([]byte(tc.in))
		if tc.bad {
			if !errors.Is(err, errBadResponse) {
				t.Errorf("%s: got size %d, err %v; want errBadResponse", tc.note, size, err)
			}
			continue
		}
		if err != nil || size != len(tc.in) || code != tc.code {
			t.Errorf("%s: got size %d, status %d, err %v; want %d, %d", tc.note, size, code, err, len(tc.in), tc.code)
		}
		// Every proper prefix is incomplete, not an error: the event loop
		// parses whatever one read brought.
		for n := 0; n < len(tc.in); n++ {
			if size, _, err := parseResponse([]byte(tc.in[:n])); size != 0 || err != nil {
				t.Errorf("%s: prefix of %d bytes: got size %d, err %v; want incomplete", tc.note, n, size, err)
			}
		}
		// Bytes after the response are not part of it.
		if size, _, _ := parseResponse([]byte(tc.in + "HTTP/1.1")); size != len(tc.in) {
			t.Errorf("%s: with bytes after it: size %d, want %d", tc.note, size, len(tc.in))
		}
	}
}

// transports are the ones this platform has.
func transports() []string {
	if runtime.GOOS == "linux" {
		return []string{"events", "goroutines"}
	}
	return []string{"goroutines"}
}

// runTransport runs one transport against srv for d.
func runTransport(t *testing.T, transport string, srv *httptest.Server, c config, body []byte) result {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	reqs := [][]byte{buildRequest(u.Host, "/api/v1/evaluate", "tok", body)}
	start := time.Now()
	switch transport {
	case "events":
		res, err := runEvents(c, u.Host, reqs, start, start.Add(c.dur))
		if err != nil {
			t.Fatal(err)
		}
		return res
	default:
		return runGoroutines(c, u.Host, reqs, start, start.Add(c.dur))
	}
}

// TestTransportsAnswerAndCount: both transports send well-formed requests,
// read small (Content-Length) and large (chunked) answers, send large
// requests that take more than one write, and count what they got.
func TestTransportsAnswerAndCount(t *testing.T) {
	// More than the ~4 MB that loopback's socket buffers take at once.
	big := []byte(`{"pad":"` + strings.Repeat("x", 6<<20) + `"}`)
	for _, tr := range transports() {
		for _, tc := range []struct {
			note      string
			body      []byte
			answerLen int
			dur       time.Duration
		}{
			{"small", []byte(`{"tool_name":"bash"}`), 40, 200 * time.Millisecond},
			{"chunked answer", []byte(`{"tool_name":"bash"}`), 100 << 10, 200 * time.Millisecond},
			{"large request", big, 40, 2 * time.Second},
		} {
			var served atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if len(tc.body) > 1<<20 {
					// Let the socket buffers fill, so that the request
					// takes more than one write.
					time.Sleep(20 * time.Millisecond)
				}
				sum := crc32.NewIEEE()
				n, _ := io.Copy(sum, r.Body)
				if r.Method != http.MethodPost || r.URL.Path != "/api/v1/evaluate" ||
					r.Header.Get("Authorization") != "Bearer tok" || n != int64(len(tc.body)) || sum.Sum32() != crc32.ChecksumIEEE(tc.body) {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				served.Add(1)
				_, _ = w.Write(bytes.Repeat([]byte("a"), tc.answerLen))
			}))
			res := runTransport(t, tr, srv, config{conns: 3, dur: tc.dur}, tc.body)
			srv.Close()
			if res.requests == 0 || res.failures != 0 {
				t.Errorf("%s, %s: %d requests, %d failed; want some, none failed", tr, tc.note, res.requests, res.failures)
			}
			if res.requests > served.Load() || res.hist.TotalCount() != res.requests {
				t.Errorf("%s, %s: counted %d (histogram %d), server answered %d", tr, tc.note, res.requests, res.hist.TotalCount(), served.Load())
			}
		}
	}
}

// TestTransportsOpenLoopKeepsToTheRate: in open loop no transport sends
// more than the schedule allows.
func TestTransportsOpenLoopKeepsToTheRate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"decision":"allow"}`))
	}))
	defer srv.Close()
	for _, tr := range transports() {
		c := config{conns: 4, rate: 400, dur: 500 * time.Millisecond}
		res := runTransport(t, tr, srv, c, []byte(`{}`))
		if most := int64(c.rate*c.dur.Seconds()) + int64(c.conns); res.requests < 1 || res.requests > most || res.failures != 0 {
			t.Errorf("%s: %d requests (%d failed) at %v/s for %v; want 1 to %d, none failed", tr, res.requests, res.failures, c.rate, c.dur, most)
		}
	}
}

// TestTransportsCountFailures: error statuses and dropped connections are
// failures, and a dropped connection is reopened rather than ending the run.
func TestTransportsCountFailures(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			conn, _, _ := http.NewResponseController(w).Hijack()
			conn.Close()
			return
		}
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	defer srv.Close()
	for _, tr := range transports() {
		n.Store(0)
		res := runTransport(t, tr, srv, config{conns: 2, dur: 300 * time.Millisecond}, []byte(`{}`))
		if res.requests < 4 || res.failures != res.requests {
			t.Errorf("%s: %d requests, %d failed; want several, all failed", tr, res.requests, res.failures)
		}
	}
}

// TestNoopAnswer: the floor server reads the body and answers like
// toolgate's evaluate, and refuses a non-loopback address.
func TestNoopAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(noopHandler))
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/api/v1/evaluate", "application/json", strings.NewReader(`{"tool_name":"bash"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(got) != noopAnswer || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("got %d %q (%s), want 200 %q", resp.StatusCode, got, resp.Header.Get("Content-Type"), noopAnswer)
	}
	if err := serveNoop("0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("serveNoop on 0.0.0.0: got %v, want a loopback error", err)
	}
}

// TestTransportsNoServer: with nothing listening, the events transport
// fails to start and the goroutines transport counts every request failed.
func TestTransportsNoServer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // its port is now free
	for _, tr := range transports() {
		u, _ := url.Parse(srv.URL)
		reqs := [][]byte{buildRequest(u.Host, "/api/v1/evaluate", "tok", []byte(`{}`))}
		c := config{conns: 2, dur: 100 * time.Millisecond}
		start := time.Now()
		if tr == "events" {
			if _, err := runEvents(c, u.Host, reqs, start, start.Add(c.dur)); err == nil || !strings.Contains(err.Error(), "connect") {
				t.Errorf("events: got %v, want a connect error", err)
			}
			continue
		}
		res := runGoroutines(c, u.Host, reqs, start, start.Add(c.dur))
		if res.failures != res.requests {
			t.Errorf("goroutines: %d requests, %d failed; want all failed", res.requests, res.failures)
		}
	}
}

// TestTransportsSurviveIdleClose: a server that closes kept-alive
// connections while they are idle (here after 20 ms, with requests 60 ms
// apart) costs no failed requests: both transports reconnect.
func TestTransportsSurviveIdleClose(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"decision":"allow"}`))
	}))
	srv.Config.IdleTimeout = 20 * time.Millisecond
	srv.Start()
	defer srv.Close()
	for _, tr := range transports() {
		c := config{conns: 1, rate: 1000.0 / 60, dur: 500 * time.Millisecond}
		res := runTransport(t, tr, srv, c, []byte(`{}`))
		if res.requests < 3 || res.failures != 0 {
			t.Errorf("%s: %d requests, %d failed; want at least 3, none failed", tr, res.requests, res.failures)
		}
	}
}

// TestTransportsGet: with -get, both transports send bodiless GETs of that
// path with the token (what the /healthz comparison relies on), the server
// reads each as a complete request, and -get refuses -batch and a path
// without its leading slash.
func TestTransportsGet(t *testing.T) {
	var served, bad atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if r.Method != http.MethodGet || r.URL.Path != "/healthz" || r.ContentLength != 0 || n != 0 ||
			r.Header.Get("Authorization") != "Bearer tok" || len(r.TransferEncoding) != 0 {
			bad.Add(1)
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		served.Add(1)
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	for _, tr := range transports() {
		c := config{conns: 3, dur: 200 * time.Millisecond, get: "/healthz", token: "tok", mix: "benign", transport: tr}
		reqs, err := requests(c, u.Host)
		if err != nil || len(reqs) != 1 {
			t.Fatalf("%s: requests: %d, %v", tr, len(reqs), err)
		}
		served.Store(0)
		start := time.Now()
		var res result
		if tr == "events" {
			if res, err = runEvents(c, u.Host, reqs, start, start.Add(c.dur)); err != nil {
				t.Fatal(err)
			}
		} else {
			res = runGoroutines(c, u.Host, reqs, start, start.Add(c.dur))
		}
		if res.requests == 0 || res.failures != 0 || res.requests > served.Load() || bad.Load() != 0 {
			t.Errorf("%s: %d requests, %d failed, server answered %d and refused %d; want some, none failed or refused",
				tr, res.requests, res.failures, served.Load(), bad.Load())
		}
	}
	for _, tc := range []struct {
		note string
		c    config
	}{
		{"with -batch", config{get: "/healthz", batch: 10}},
		{"no leading slash", config{get: "healthz"}},
	} {
		if _, err := requests(tc.c, u.Host); err == nil {
			t.Errorf("%s: got no error", tc.note)
		}
	}
}
