package store

import (
	"context"
	"errors"
	"time"
)

// startWatch asks the backend to tell of outside changes and runs the
// reloads they ask for on one goroutine of the Store, so that a slow read
// never holds up the backend's watcher (a database listener serves other
// channels too) and a burst of changes costs one reload.
func (s *Store) startWatch() error {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopWatch = cancel
	if err := s.backend.Watch(ctx, s.changed); err != nil {
		cancel()
		return err
	}
	s.wg.Add(1)
	go s.reloadLoop(ctx)
	return nil
}

// changed is the backend's Watch callback: ask for a reload.
func (s *Store) changed() {
	select {
	case s.kick <- struct{}{}:
	default: // a reload is already due
	}
}

func (s *Store) reloadLoop(ctx context.Context) {
	defer s.wg.Done()
	// A reload that fails (the database away, a busy pool) is retried with
	// backoff until one succeeds: the change that asked for it will not be
	// announced again, so waiting for the next one could keep a stale
	// policy (and a failing Health) for good.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	backoff := reloadRetryMin
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-retry.C:
		}
		if err := s.Reload(); err != nil {
			if backoff == reloadRetryMin {
				s.log.Warn("reload policy; retrying", "backend", s.backend.Name(), "dir", s.Dir(), "err", err)
			}
			retry.Reset(backoff)
			backoff = min(2*backoff, reloadRetryMax)
			continue
		}
		backoff = reloadRetryMin
	}
}

// Backoff of the reload retries.
const (
	reloadRetryMin = 100 * time.Millisecond
	reloadRetryMax = 5 * time.Second
)

// noteBackend records whether the backend answered: an error wrapping
// ErrUnavailable makes Health fail until the next answer.
func (s *Store) noteBackend(err error) {
	switch {
	case err == nil:
		if s.unavailable.Load() != nil {
			s.unavailable.Store(nil)
			s.log.Info("policy backend reachable again", "backend", s.backend.Name())
		}
	case errors.Is(err, ErrUnavailable):
		if s.unavailable.Swap(&err) == nil {
			s.log.Warn("policy backend unreachable; the last good policy stays in force", "backend", s.backend.Name(), "err", err)
		}
	}
}

// Health is nil while the backend answers; after a read or write that found
// it unreachable it is that error (wrapping ErrUnavailable) until the next
// read or write succeeds. The policy in force keeps deciding meanwhile.
// /readyz fails while it is not nil.
func (s *Store) Health() error {
	if p := s.unavailable.Load(); p != nil {
		return *p
	}
	return nil
}
