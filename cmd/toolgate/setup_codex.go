package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"time"
)

// Codex (0.169) runs a hook only after a person trusted it: the trust is
// a hash of the hook kept in ~/.codex/config.toml under hooks.state, and
// an untrusted hook is skipped without a word, even by `codex exec`.
// toolgate asks Codex itself, through `codex app-server` (JSON-RPC over
// stdio, https://developers.openai.com/codex/app-server): hooks/list gives
// each hook's key, current hash and trust status, and config/value/write
// records the trust the way the /hooks review does. Only toolgate's own
// hooks, in the file setup wrote, are trusted.

// codexTimeout bounds one conversation with the app server.
const codexTimeout = 60 * time.Second

// codexHook is one hook of hooks/list.
type codexHook struct {
	Key         string `json:"key"`
	EventName   string `json:"eventName"`
	Command     string `json:"command"`
	SourcePath  string `json:"sourcePath"`
	Enabled     bool   `json:"enabled"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// The app server's messages toolgate sends
// (https://developers.openai.com/codex/app-server).
type (
	// rpcMessage is a JSON-RPC request, or without an id a notification.
	rpcMessage struct {
		ID     int    `json:"id,omitempty"`
		Method string `json:"method"`
		Params any    `json:"params,omitempty"`
	}
	initializeParams struct {
		ClientInfo clientInfo `json:"clientInfo"`
	}
	clientInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	hooksListParams struct {
		Cwds []string `json:"cwds"`
	}
	// configWrite is config/value/write: Value is written at KeyPath.
	configWrite struct {
		KeyPath       string `json:"keyPath"`
		MergeStrategy string `json:"mergeStrategy"`
		Value         any    `json:"value"`
	}
	// hookTrust is one entry of hooks.state: the hash of the hook trusted.
	hookTrust struct {
		TrustedHash string `json:"trusted_hash"`
	}
)

// trustCodexHooks trusts toolgate's hooks of file, as Codex sees them
// from dir, and checks that Codex now calls them trusted.
func trustCodexHooks(codexBin, file, dir string, commands []string, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), codexTimeout)
	defer cancel()
	s, err := startCodexAppServer(ctx, codexBin, dir)
	if err != nil {
		return err
	}
	defer s.close()
	ours, err := s.toolgateHooks(dir, file, commands)
	if err != nil {
		return err
	}
	if len(ours) == 0 {
		return fmt.Errorf("codex does not list toolgate's hooks of %s", file)
	}
	state := map[string]hookTrust{} // keyed by Codex's hook keys
	for _, h := range ours {
		state[h.Key] = hookTrust{TrustedHash: h.CurrentHash}
	}
	if _, err := s.call("config/value/write", configWrite{
		KeyPath: "hooks.state", Value: state, MergeStrategy: "upsert"}); err != nil {
		return fmt.Errorf("recording the trust: %w", err)
	}
	after, err := s.toolgateHooks(dir, file, commands)
	if err != nil {
		return err
	}
	for _, h := range after {
		if h.TrustStatus != "trusted" || !h.Enabled {
			return fmt.Errorf("codex still calls the hook %s %s", h.Key, h.TrustStatus)
		}
	}
	fmt.Fprintf(stdout, "  Codex trusts the %d toolgate hook(s) (hooks.state in its config.toml)\n", len(after))
	return nil
}

// codexHooksStatus lists toolgate's hooks of file as Codex sees them from
// dir: what doctor reads.
func codexHooksStatus(codexBin, file, dir string) ([]codexHook, error) {
	ctx, cancel := context.WithTimeout(context.Background(), codexTimeout)
	defer cancel()
	s, err := startCodexAppServer(ctx, codexBin, dir)
	if err != nil {
		return nil, err
	}
	defer s.close()
	return s.toolgateHooks(dir, file, nil)
}

// codexAppServer is one running `codex app-server`.
type codexAppServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *bytes.Buffer
	nextID int
}

// startCodexAppServer starts the app server in dir and says hello.
func startCodexAppServer(ctx context.Context, codexBin, dir string) (*codexAppServer, error) {
	path, err := exec.LookPath(codexBin)
	if err != nil {
		return nil, fmt.Errorf("cannot find Codex (%s): %w", codexBin, err)
	}
	cmd := exec.CommandContext(ctx, path, "app-server")
	cmd.Dir = dir
	s := &codexAppServer{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = &limitedBuffer{b: s.stderr, max: 4096}
	if s.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.out = bufio.NewScanner(out)
	s.out.Buffer(make([]byte, 64*1024), 16<<20)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s app-server: %w", path, err)
	}
	if _, err := s.call("initialize", initializeParams{ClientInfo: clientInfo{Name: "toolgate", Version: "1"}}); err != nil {
		s.close()
		return nil, err
	}
	if err := s.send(rpcMessage{Method: "initialized"}); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// toolgateHooks lists the hooks Codex loads in dir and keeps toolgate's
// hooks of file: those running one of commands (what setup wrote), or any
// `toolgate hook` command when commands is empty.
func (s *codexAppServer) toolgateHooks(dir, file string, commands []string) ([]codexHook, error) {
	res, err := s.call("hooks/list", hooksListParams{Cwds: []string{dir}})
	if err != nil {
		return nil, err
	}
	var list struct {
		Data []struct {
			Hooks  []codexHook `json:"hooks"`
			Errors []any       `json:"errors"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		return nil, fmt.Errorf("reading hooks/list: %w", err)
	}
	var ours []codexHook
	for _, d := range list.Data {
		for _, h := range d.Hooks {
			if filepath.Clean(h.SourcePath) == filepath.Clean(file) && isOurCommand(h.Command, commands) {
				ours = append(ours, h)
			}
		}
	}
	return ours, nil
}

// send writes one JSON-RPC message line.
func (s *codexAppServer) send(msg rpcMessage) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = s.in.Write(append(b, '\n'))
	return err
}

// call sends a request and reads lines until its answer; notifications in
// between are skipped.
func (s *codexAppServer) call(method string, params any) (json.RawMessage, error) {
	s.nextID++
	id := s.nextID
	if err := s.send(rpcMessage{ID: id, Method: method, Params: params}); err != nil {
		return nil, fmt.Errorf("codex app-server %s: %w", method, err)
	}
	for s.out.Scan() {
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(s.out.Bytes(), &msg) != nil || msg.ID == nil || *msg.ID != id {
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("codex app-server %s: %s", method, msg.Error.Message)
		}
		return msg.Result, nil
	}
	err := s.out.Err()
	if err == nil {
		err = errors.New("it closed its output")
	}
	return nil, fmt.Errorf("codex app-server %s: %w %s", method, err, bytes.TrimSpace(s.stderr.Bytes()))
}

// close ends the app server.
func (s *codexAppServer) close() {
	_ = s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}

// isOurCommand tells one of commands, or with none a `toolgate hook`.
func isOurCommand(cmd string, commands []string) bool {
	if cmd == "" {
		return false
	}
	if len(commands) == 0 {
		return toolgateCommand.MatchString(cmd)
	}
	for _, c := range commands {
		if cmd == c {
			return true
		}
	}
	return false
}
