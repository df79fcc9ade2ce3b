package engine

import (
	"sync"
	"sync/atomic"
)

// maxReasonMemo bounds the reasons a policy remembers: a tool name is the
// caller's text, so without a bound a stream of made-up names would grow
// the memo without end. Past it, reasons are built per call, as before.
const maxReasonMemo = 8192

// reasonMemo remembers the reason strings of rule hits (a rule's level and
// id, and the tool for an ask), built the first time a call meets them.
// Building one per call was the only allocation of a rule hit, and with a
// large policy in memory each allocation costs the garbage collector more:
// at 100,000 rules it was a fifth of an ask's time.
type reasonMemo struct {
	m sync.Map // reasonKey -> string
	n atomic.Int32
}

// reason returns the reason for key, remembered while the memo has room.
func (r *reasonMemo) reason(key reasonKey) string {
	if s, ok := r.m.Load(key); ok {
		return s.(string)
	}
	s := formatReason(key.level, key.tool, key.rule)
	if r.n.Load() < maxReasonMemo {
		if _, loaded := r.m.LoadOrStore(key, s); !loaded {
			r.n.Add(1)
		}
	}
	return s
}
