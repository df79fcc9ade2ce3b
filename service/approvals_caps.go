package service

import (
	"sync"
)

// PendingCaps bounds the pending asks one agent token, and one session of
// it, may hold at once (docs/operations.md#pending-asks-are-capped): one
// token must not be able to drown the inbox, the pages and the server's
// memory in asks. Zero means the default.
type PendingCaps struct {
	PerToken   int
	PerSession int
}

// DefaultPendingCaps are the caps when none are set: far above what a
// person can answer, far below what floods a page.
var DefaultPendingCaps = PendingCaps{PerToken: 100, PerSession: 20}

// CodeTooManyPending is the error code of an ask over a cap.
const CodeTooManyPending = "too_many_pending"

// pendingLedger remembers which pending asks each token and session
// opened, to count them against the caps. It is this replica's count: on
// PostgreSQL each replica caps what it was asked.
type pendingLedger struct {
	mu        sync.Mutex
	caps      PendingCaps
	byToken   map[string]map[string]struct{}
	bySession map[string]map[string]struct{}
	reserved  map[string]int // asks being created, by token and by token+session
}

func newPendingLedger(caps PendingCaps) *pendingLedger {
	if caps.PerToken <= 0 {
		caps.PerToken = DefaultPendingCaps.PerToken
	}
	if caps.PerSession <= 0 {
		caps.PerSession = DefaultPendingCaps.PerSession
	}
	return &pendingLedger{caps: caps, byToken: map[string]map[string]struct{}{},
		bySession: map[string]map[string]struct{}{}, reserved: map[string]int{}}
}

// reserve takes a slot for a new ask of token and session, or says which
// cap is full. stillPending reports whether a remembered ask still waits;
// the ones that do not are forgotten first. A reserved slot must be given
// back with settle.
func (l *pendingLedger) reserve(token, session string, stillPending func(id string) bool) *Error {
	l.mu.Lock()
	defer l.mu.Unlock()
	sk := token + "\x00" + session
	if n := l.count(l.byToken, token, stillPending) + l.reserved[token]; n >= l.caps.PerToken {
		return tooMany("this token has %d asks waiting for a person, its most; answer or let some expire first", n)
	}
	if session != "" {
		if n := l.count(l.bySession, sk, stillPending) + l.reserved[sk]; n >= l.caps.PerSession {
			return tooMany("this session has %d asks waiting for a person, its most; answer or let some expire first", n)
		}
	}
	l.reserved[token]++
	l.reserved[sk]++
	return nil
}

// settle gives a reserved slot back and, when the ask was opened (id not
// empty), remembers it.
func (l *pendingLedger) settle(token, session, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sk := token + "\x00" + session
	l.release(token)
	l.release(sk)
	if id == "" {
		return
	}
	add(l.byToken, token, id)
	if session != "" {
		add(l.bySession, sk, id)
	}
}

func (l *pendingLedger) release(key string) {
	if l.reserved[key]--; l.reserved[key] <= 0 {
		delete(l.reserved, key)
	}
}

// count forgets the asks of key that no longer wait and counts the rest.
func (l *pendingLedger) count(m map[string]map[string]struct{}, key string, stillPending func(string) bool) int {
	set := m[key]
	for id := range set {
		if !stillPending(id) {
			delete(set, id)
		}
	}
	if len(set) == 0 {
		delete(m, key)
	}
	return len(set)
}

func add(m map[string]map[string]struct{}, key, id string) {
	set := m[key]
	if set == nil {
		set = map[string]struct{}{}
		m[key] = set
	}
	set[id] = struct{}{}
}

func tooMany(format string, n int) *Error {
	e := Forbidden("", format, n)
	e.Kind, e.Code = KindTooMany, CodeTooManyPending
	return e
}
