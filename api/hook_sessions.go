package api

import "sync"

// sessionWorkspaces remembers the first cwd each hook session showed, the
// workspace of its later calls when neither the hook's configuration nor
// the server pins one: a cwd sent later is where the agent runs the
// command (Codex reports the model-chosen workdir there), which the model
// chooses, so it must not move the workspace. It is bounded: past
// maxSessions the oldest session is forgotten, and a forgotten session's
// next cwd becomes its workspace again. It lives in one replica's memory;
// pinning the workspace in the hook's configuration (`toolgate setup`)
// does not depend on it.
type sessionWorkspaces struct {
	mu    sync.Mutex
	first map[string]string
	order []string // keys, oldest first
	max   int
}

// maxSessions bounds the sessions remembered.
const maxSessions = 10000

func newSessionWorkspaces(max int) *sessionWorkspaces {
	return &sessionWorkspaces{first: map[string]string{}, max: max}
}

// workspace returns the session's workspace: the cwd it first showed,
// remembering cwd when the session is new. A call without a session or a
// cwd is not remembered.
func (s *sessionWorkspaces) workspace(key, cwd string) string {
	if key == "" || cwd == "" {
		return cwd
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ws, ok := s.first[key]; ok {
		return ws
	}
	if len(s.order) >= s.max {
		delete(s.first, s.order[0])
		s.order = s.order[1:]
	}
	s.first[key] = cwd
	s.order = append(s.order, key)
	return cwd
}
