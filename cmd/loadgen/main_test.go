package main

import (
	"encoding/json"
	"testing"
	"time"
)

// TestBodiesMixKindsAndFiles: single calls cycle through the kinds in mix
// order, and path calls name different files.
func TestBodiesMixKindsAndFiles(t *testing.T) {
	got, err := bodies(config{mix: "benign,path"})
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * rounds(config{}); len(got) != want {
		t.Fatalf("got %d bodies, want %d", len(got), want)
	}
	paths := map[string]bool{}
	for i, b := range got {
		var call struct {
			ToolName string            `json:"tool_name"`
			ToolArgs map[string]string `json:"tool_args"`
		}
		if err := json.Unmarshal(b, &call); err != nil {
			t.Fatal(err)
		}
		want := []string{"bash", "read_file"}[i%2]
		if call.ToolName != want {
			t.Errorf("body %d: tool %q, want %q", i, call.ToolName, want)
		}
		if want == "read_file" {
			paths[call.ToolArgs["path"]] = true
		}
	}
	if len(paths) != rounds(config{}) {
		t.Errorf("path calls name %d files, want %d", len(paths), rounds(config{}))
	}
	if _, err := bodies(config{mix: "benign,nope"}); err == nil {
		t.Error("an unknown kind: got no error")
	}
}

// TestScheduleOpenLoop: at -rate 1000 over 4 connections each connection
// sends every 4 ms, connection 1 a quarter interval after connection 0,
// and a connection that fell behind is told the times it should have sent.
func TestScheduleOpenLoop(t *testing.T) {
	start := time.Now().Add(-time.Second) // already a second behind
	s := newSchedule(config{conns: 4, rate: 1000}, 1, start)
	end := start.Add(time.Hour)
	for k := 0; k < 3; k++ {
		due, ok := s.next(end)
		if want := start.Add(time.Millisecond + time.Duration(k)*4*time.Millisecond); !ok || !due.Equal(want) {
			t.Errorf("request %d: due %v (ok %v), want %v", k, due.Sub(start), ok, want.Sub(start))
		}
	}
	if _, ok := s.next(start.Add(10 * time.Millisecond)); ok {
		t.Error("a request due after the end: got ok")
	}
	closed := newSchedule(config{conns: 4}, 1, start)
	if due, ok := closed.next(end); !ok || time.Since(due) > time.Second {
		t.Errorf("closed loop: due %v, want now", due)
	}
}
