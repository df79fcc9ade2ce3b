// Package callbacks keeps the functions to call when something happens
// (the policy changed, a session was deleted), safe to register and call
// from any goroutine. It imports no toolgate package.
package callbacks

import "sync"

// List is a list of functions; the zero List is empty and ready.
type List struct {
	mu  sync.Mutex
	fns []func()
}

// Add registers fn.
func (l *List) Add(fn func()) {
	l.mu.Lock()
	l.fns = append(l.fns, fn)
	l.mu.Unlock()
}

// Call calls every function registered so far, in the order they were
// added, on the caller's goroutine. The lock is not held while they run,
// so a function may Add another (which the next Call runs).
func (l *List) Call() { l.call(false) }

// CallOnce is Call that also empties the list, so that each function runs
// once however often CallOnce is called: a function Added meanwhile waits
// for the next CallOnce.
func (l *List) CallOnce() { l.call(true) }

func (l *List) call(empty bool) {
	l.mu.Lock()
	fns := l.fns[:len(l.fns):len(l.fns)]
	if empty {
		l.fns = nil
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
