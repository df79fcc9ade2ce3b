package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestRunPortInUse: when the address is taken, run fails after wiring and
// releases what wiring opened.
func TestRunPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	warm, err := wire(testConfig(t), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	warm.close()
	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	dir := t.TempDir()
	err = run(context.Background(), []string{"--addr", ln.Addr().String(), "--config-dir", filepath.Join(dir, "c"), "--workspace", dir},
		io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Fatalf("run on a taken address: %v, want a listen error", err)
	}
	settled(t, "after run failed to listen", fds, goroutines)
}

// TestRunServesAndShutsDown: run serves until its context ends, then shuts
// down and returns nil, leaving nothing open.
func TestRunServesAndShutsDown(t *testing.T) {
	warm, err := wire(testConfig(t), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	warm.close()
	fds, goroutines := openFDs(t), runtime.NumGoroutine()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--addr", addr, "--config-dir", filepath.Join(dir, "c"), "--workspace", dir, "--log-level", "error"}, &out, io.Discard)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("/healthz: %d", resp.StatusCode)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not answer /healthz: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after its context ended: %v, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
	if !strings.Contains(out.String(), "toolgate listening on http://"+addr) {
		t.Errorf("run printed %q, want where it listens", out.String())
	}
	http.DefaultClient.CloseIdleConnections()
	settled(t, "after run returned", fds, goroutines)
}
