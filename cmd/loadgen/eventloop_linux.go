package main

import (
	"container/heap"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The events transport drives every connection from one OS thread with
// epoll, the way wrk does, instead of one goroutine per connection. On the
// 2-core VM the figures are taken on, a thread switch is expensive, and a
// goroutine per connection costs one or more of them per request (and, in
// open loop, a timer wake-up per request); this loop wakes once for
// whatever is ready. It also paces open loop with a nanosecond epoll
// timeout rather than 64 sleeping goroutines.

const defaultTransport = "events"

// evConn is one connection of the event loop.
type evConn struct {
	fd    int
	sched *schedule
	due   time.Time // when the request in flight (or the next one) is due
	sent  time.Time // when the request in flight was sent
	next  int       // index of the next request
	out   []byte    // the unsent rest of the request in flight
	in    []byte    // the answer so far
	busy  bool
	// watchOut is whether epoll also reports writability, which it does
	// only while a request is partly sent.
	watchOut bool
}

// idleHeap orders the connections waiting to send by due time.
type idleHeap []*evConn

func (h idleHeap) Len() int           { return len(h) }
func (h idleHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h idleHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idleHeap) Push(x any)        { *h = append(*h, x.(*evConn)) }
func (h *idleHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// eventLoop is the state of one run of the events transport.
type eventLoop struct {
	ep    int
	addr  unix.SockaddrInet4
	reqs  [][]byte
	end   time.Time
	conns []*evConn
	byFD  map[int32]*evConn // the connection of each socket in the epoll set
	idle  idleHeap
	res   result
}

func runEvents(c config, host string, reqs [][]byte, start, end time.Time) (result, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l, err := newEventLoop(host, reqs, end)
	if err != nil {
		return result{}, err
	}
	defer l.close()
	for w := 0; w < c.conns; w++ {
		cn := &evConn{fd: -1, sched: newSchedule(c, w, start), next: w}
		if err := l.connect(cn); err != nil {
			return result{}, err
		}
		l.conns = append(l.conns, cn)
		l.schedule(cn, time.Now())
	}
	err = l.loop()
	return l.res, err
}

func newEventLoop(host string, reqs [][]byte, end time.Time) (*eventLoop, error) {
	h, p, err := net.SplitHostPort(host)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", p, err)
	}
	ip := net.ParseIP(h).To4()
	if ip == nil {
		return nil, fmt.Errorf("host %q is not an IPv4 address", h)
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", err)
	}
	l := &eventLoop{ep: ep, reqs: reqs, end: end, byFD: map[int32]*evConn{}, res: newResult()}
	l.addr.Port = port
	copy(l.addr.Addr[:], ip)
	return l, nil
}

func (l *eventLoop) close() {
	for _, cn := range l.conns {
		if cn.fd >= 0 {
			unix.Close(cn.fd)
		}
	}
	unix.Close(l.ep)
}

// connect opens cn's socket and adds it to the epoll set.
func (l *eventLoop) connect(cn *evConn) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	if err := connectWait(fd, &l.addr, 5*time.Second); err != nil {
		unix.Close(fd)
		return err
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	cn.fd = fd
	l.byFD[int32(fd)] = cn
	return nil
}

// connectWait connects the non-blocking socket fd to addr and waits up to
// timeout for the connection to be made.
func connectWait(fd int, addr unix.Sockaddr, timeout time.Duration) error {
	err := unix.Connect(fd, addr)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINPROGRESS) && !errors.Is(err, unix.EINTR) {
		return fmt.Errorf("connect: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return errors.New("connect: timed out")
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(pfd, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) || (err == nil && n == 0) {
			continue
		}
		if err != nil {
			return fmt.Errorf("connect: poll: %w", err)
		}
		soErr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		if soErr != 0 {
			return fmt.Errorf("connect: %w", unix.Errno(soErr))
		}
		return nil
	}
}

// schedule sends cn's next request now if it is due, or parks cn in the
// idle heap until it is; a connection whose next request would be due
// after the end is retired.
func (l *eventLoop) schedule(cn *evConn, now time.Time) {
	due, ok := cn.sched.nextDue(l.end)
	if !ok {
		return
	}
	cn.due = due
	if !due.After(now) {
		l.send(cn, now)
		return
	}
	heap.Push(&l.idle, cn)
}

func (l *eventLoop) loop() error {
	events := make([]unix.EpollEvent, 256)
	nextSweep := time.Now().Add(time.Second)
	for {
		now := time.Now()
		if !now.Before(l.end) {
			return nil
		}
		for l.idle.Len() > 0 && !l.idle[0].due.After(now) {
			l.send(heap.Pop(&l.idle).(*evConn), now)
		}
		if now.After(nextSweep) {
			l.sweep(now)
			nextSweep = now.Add(time.Second)
		}
		wait := l.end.Sub(now)
		if l.idle.Len() > 0 {
			wait = min(wait, l.idle[0].due.Sub(now))
		}
		n, err := epollWait(l.ep, events, wait)
		if err != nil {
			return err
		}
		for _, ev := range events[:n] {
			cn := l.byFD[ev.Fd]
			if cn == nil {
				continue // closed by an earlier event of this round
			}
			if ev.Events&unix.EPOLLOUT != 0 {
				l.flush(cn)
			}
			if cn.fd == int(ev.Fd) && ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				l.receive(cn)
			}
		}
	}
}

// send starts cn's next request.
func (l *eventLoop) send(cn *evConn, now time.Time) {
	if cn.busy {
		// Each connection is in the idle heap at most once and only while
		// it has nothing in flight; a second request would be misread.
		panic("loadgen: a request sent on a connection with one in flight")
	}
	cn.busy, cn.sent, cn.in = true, now, cn.in[:0]
	cn.out = l.reqs[cn.next%len(l.reqs)]
	cn.next++
	l.flush(cn)
}

// flush writes what is left of cn's request, and asks epoll for
// writability while some is left.
func (l *eventLoop) flush(cn *evConn) {
	if len(cn.out) == 0 {
		return
	}
	n, err := unix.Write(cn.fd, cn.out)
	if err != nil && !retryable(err) {
		l.fail(cn)
		return
	}
	if n > 0 {
		cn.out = cn.out[n:]
	}
	if watch := len(cn.out) > 0; watch != cn.watchOut {
		events := uint32(unix.EPOLLIN)
		if watch {
			events |= unix.EPOLLOUT
		}
		ev := unix.EpollEvent{Events: events, Fd: int32(cn.fd)}
		if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, cn.fd, &ev); err != nil {
			l.fail(cn)
			return
		}
		cn.watchOut = watch
	}
}

// receive reads what has arrived on cn and, once the answer is whole,
// records it and schedules the next request.
func (l *eventLoop) receive(cn *evConn) {
	if len(cn.in) == cap(cn.in) {
		cn.in = append(cn.in, make([]byte, max(64<<10, cap(cn.in)))...)[:len(cn.in)]
	}
	n, err := unix.Read(cn.fd, cn.in[len(cn.in):cap(cn.in)])
	if err != nil && retryable(err) {
		return // epoll is level-triggered: it reports the socket again
	}
	if err != nil || n == 0 || !cn.busy {
		l.fail(cn)
		return
	}
	cn.in = cn.in[:len(cn.in)+n]
	size, status, err := parseResponse(cn.in)
	if err != nil {
		l.fail(cn)
		return
	}
	if size == 0 {
		return
	}
	now := time.Now()
	l.res.record(now.Sub(cn.due), status == 200)
	cn.busy = false
	l.schedule(cn, now)
}

// fail closes cn's socket and opens a new one. If a request was in flight
// it is counted as failed and the next one is scheduled; a connection
// closed while idle (a server may close keep-alive connections) is already
// waiting in the idle heap. A connection that cannot reconnect is retired
// if it was busy; an idle one fails again when its next request is sent.
func (l *eventLoop) fail(cn *evConn) {
	now := time.Now()
	wasBusy := cn.busy
	if wasBusy {
		l.res.record(now.Sub(cn.due), false)
	}
	cn.busy, cn.out, cn.watchOut = false, nil, false
	delete(l.byFD, int32(cn.fd))
	unix.Close(cn.fd) // also drops it from the epoll set
	cn.fd = -1
	if l.connect(cn) != nil || !wasBusy {
		return
	}
	l.schedule(cn, now)
}

// sweep fails requests that have waited longer than requestTimeout.
func (l *eventLoop) sweep(now time.Time) {
	for _, cn := range l.conns {
		if cn.busy && now.Sub(cn.sent) > requestTimeout {
			l.fail(cn)
		}
	}
}

// retryable is an error after which the same call may simply be made
// again later.
func retryable(err error) bool {
	return errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR)
}

// epollWait waits up to d with epoll_pwait2's nanosecond timeout, or
// epoll_wait's milliseconds (rounded up) on a kernel without it.
func epollWait(ep int, events []unix.EpollEvent, d time.Duration) (int, error) {
	d = max(d, 0)
	ts := unix.NsecToTimespec(int64(d))
	r, _, errno := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep),
		uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(unsafe.Pointer(&ts)), 0, 0)
	switch errno {
	case 0:
		return int(r), nil
	case unix.EINTR:
		return 0, nil
	case unix.ENOSYS:
		n, err := unix.EpollWait(ep, events, int((d+time.Millisecond-1)/time.Millisecond))
		if errors.Is(err, unix.EINTR) {
			return 0, nil
		}
		return n, err
	}
	return 0, fmt.Errorf("epoll_pwait2: %w", errno)
}
