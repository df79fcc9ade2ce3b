package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// reloadDelay lets a burst of events (an editor's write, rename and chmod)
// settle into one reload.
const reloadDelay = 40 * time.Millisecond

// startWatcher watches the config dir (not the files, so that editors that
// replace a file by rename are seen) and reloads when either file changes.
func (s *Store) startWatcher() error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("store: watch %s: %w", s.dir, err)
	}
	if err := w.Add(s.dir); err != nil {
		w.Close()
		return fmt.Errorf("store: watch %s: %w", s.dir, err)
	}
	s.watcher = w
	s.wg.Add(1)
	go s.watch(w)
	return nil
}

func (s *Store) watch(w *fsnotify.Watcher) {
	defer s.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-s.done:
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if name := filepath.Base(ev.Name); name == ConfigFile || name == BuiltinFile {
				timer.Reset(reloadDelay)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			s.log.Warn("config dir watcher", "dir", s.dir, "err", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				timer.Reset(reloadDelay)
			}
		case <-timer.C:
			if err := s.Reload(); err != nil {
				s.log.Warn("reload config", "dir", s.dir, "err", err)
			}
		}
	}
}
