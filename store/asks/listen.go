package asks

import (
	"context"
	"errors"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/store/pg"
)

// noticeQueue is how many approval notifications wait for their row to be
// read; past it they are dropped and a resync reloads everything instead.
const noticeQueue = 1024

// Listen reports each notified ask to n until ctx ends. The process's
// Listener hands over only ids, on its own goroutine; the rows are read here,
// on Listen's goroutine, so a slow database never holds up the Listener's
// other channels (policy, tokens). After every (re)connect of the Listener,
// and whenever a notification could not be followed (queue full, row
// unreadable), n.Resync runs so nothing is missed.
func (s *Approvals) Listen(ctx context.Context, n approval.Notify) error {
	ids := make(chan string, noticeQueue)
	resync := make(chan struct{}, 1)
	askResync := func() { pg.Poke(resync) }
	unsubscribe := s.db.Listener().Subscribe(pg.ChannelApprovals, func(id string) {
		select {
		case ids <- id:
		default:
			askResync()
		}
	}, askResync)
	defer unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-resync:
			drain(ids)
			n.Resync()
		case id := <-ids:
			a, err := s.Get(ctx, id)
			switch {
			case err == nil:
				n.Changed(a)
			case errors.Is(err, approval.ErrNotFound):
				// removed after its retention: nothing to tell
			case ctx.Err() == nil:
				s.log.Warn("pg approvals: reading a notified ask failed; resyncing", "id", id, "err", err)
				askResync()
			}
		}
	}
}

// drain empties ids: a resync reads every row anyway.
func drain(ids chan string) {
	for {
		select {
		case <-ids:
		default:
			return
		}
	}
}
