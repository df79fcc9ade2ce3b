package approval

// Subscribe returns a channel of every event and a cancel func. The channel
// is closed when cancel is called, when the subscriber lags (its buffer is
// full when an event is sent: the manager never blocks on a subscriber, it
// drops it instead), and at Shutdown. A dropped subscriber should resync
// from List and subscribe again.
func (m *Manager) Subscribe() (<-chan Event, func()) {
	return m.SubscribeFilter(Filter{}, m.opts.SubscriberBuffer)
}

// SubscribeFilter is Subscribe limited to the events of approvals the filter
// allows, with a channel of the given capacity (the default when <= 0).
func (m *Manager) SubscribeFilter(f Filter, buffer int) (<-chan Event, func()) {
	if buffer <= 0 {
		buffer = m.opts.SubscriberBuffer
	}
	s := &subscriber{ch: make(chan Event, buffer), filter: f}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		close(s.ch)
		return s.ch, func() {}
	}
	m.subs[s] = struct{}{}
	m.mu.Unlock()
	return s.ch, func() { m.unsubscribe(s) }
}

func (m *Manager) unsubscribe(s *subscriber) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.subs[s]; ok {
		delete(m.subs, s)
		close(s.ch)
	}
}

// publishLocked sends an event to every subscriber without blocking; it runs
// under m.mu so every subscriber sees events in the order they happened.
func (m *Manager) publishLocked(typ string, a Approval) {
	m.sendLocked(Event{Type: typ, Approval: a, Local: m.asks.local(a.ID)})
}

// sendLocked is publishLocked's delivery.
func (m *Manager) sendLocked(ev Event) {
	a := ev.Approval
	for s := range m.subs {
		if !s.filter.Allows(a) {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			delete(m.subs, s)
			close(s.ch)
			m.subsDrops.Add(1)
			m.log.Warn("approval: dropped a lagging subscriber", "buffer", cap(s.ch))
		}
	}
}
