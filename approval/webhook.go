package approval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/engine"
	"github.com/toolgate/toolgate/internal/defaults"
)

// Defaults of WebhookOptions. With them one notification is tried at most
// 5 times; the worst case (every try timing out) ends within
// 5 x 5 s + (1 + 2 + 4 + 8) s = 40 s.
const (
	DefaultWebhookQueue     = 256
	DefaultWebhookAttempts  = 5
	DefaultWebhookBaseDelay = time.Second
	DefaultWebhookMaxDelay  = 8 * time.Second
	DefaultWebhookTimeout   = 5 * time.Second
)

// followBuffer is the capacity of the notifier's subscription to the
// manager: the forwarder only moves events into the queues, so it lags only
// if starved of CPU for this many asks.
const followBuffer = 1024

// WebhookOptions configure a Notifier.
type WebhookOptions struct {
	// URLs receive every new ask. Each has its own queue and worker, so a
	// slow or dead receiver never delays another.
	URLs []string
	// Secret keys the HMAC-SHA256 signature of each body, sent as
	// X-Toolgate-Signature. Required unless every URL is a Slack incoming
	// webhook (whose URL is its own secret). Never logged.
	Secret []byte
	// PublicURL is the base of the link to the ask in the admin pages:
	// <PublicURL>/approvals#<id>.
	PublicURL string
	// Summarize and Redact are the decision log's redaction
	// (redact.Summarize, redact.Text): the arguments' one-line summary and
	// the masking of free text. Both are required.
	Summarize func(engine.Call) string
	Redact    func(string) string
	// QueueSize bounds the notifications waiting per URL; when full, new
	// ones are dropped and counted (DefaultWebhookQueue).
	QueueSize int
	// Attempts is the most tries per notification (DefaultWebhookAttempts).
	Attempts int
	// BaseDelay and MaxDelay bound the backoff between tries: the n-th
	// retry waits between half and all of min(BaseDelay*2^(n-1), MaxDelay).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// Timeout bounds one try (DefaultWebhookTimeout).
	Timeout time.Duration
	// Client posts the notifications; a client that does not follow
	// redirects when nil. Its Timeout is not used (Timeout is).
	Client *http.Client
	// Jitter returns a number in [0, 1); math/rand/v2 when nil.
	Jitter func() float64
	Logger *slog.Logger
}

// ErrWebhookConfig is wrapped by every configuration error of NewNotifier.
var ErrWebhookConfig = errors.New("approval webhook")

func (o *WebhookOptions) fill() {
	defaults.Positive(&o.QueueSize, DefaultWebhookQueue)
	defaults.Positive(&o.Attempts, DefaultWebhookAttempts)
	defaults.Positive(&o.BaseDelay, DefaultWebhookBaseDelay)
	defaults.Positive(&o.MaxDelay, DefaultWebhookMaxDelay)
	defaults.Positive(&o.Timeout, DefaultWebhookTimeout)
	if o.Client == nil {
		o.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
			// A redirect would resend the signed body somewhere not configured.
			return http.ErrUseLastResponse
		}}
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Notifier posts every new ask to the approval webhooks (openapi.yaml,
// "Approval notifications"). Notify never blocks: each URL has a bounded
// queue and one worker that posts, retrying with backoff; what does not fit
// is dropped, counted and logged. Nothing it does delays or changes a
// decision. It is safe for concurrent use.
type Notifier struct {
	opts    WebhookOptions
	targets []*webhookTarget
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once

	sent, failed, dropped atomic.Uint64
}

// webhookTarget is one URL, its queue and what the logs may say of it.
type webhookTarget struct {
	url   string
	slack bool
	// host is all the logs name of the URL: the path of a Slack webhook is
	// its secret.
	host  string
	queue chan Approval
	// lastDropLog is when a drop was last logged (unix ns): at most one
	// line a second, so a flood of asks cannot flood the log too.
	lastDropLog atomic.Int64
}

// NewNotifier checks the options and starts one worker per URL. Close
// stops them.
func NewNotifier(opts WebhookOptions) (*Notifier, error) {
	opts.fill()
	if opts.Summarize == nil || opts.Redact == nil {
		return nil, fmt.Errorf("%w: Summarize and Redact are required", ErrWebhookConfig)
	}
	if err := checkPublicURL(opts.PublicURL); err != nil {
		return nil, err
	}
	n := &Notifier{opts: opts}
	for _, raw := range opts.URLs {
		t, err := newWebhookTarget(raw, opts.QueueSize)
		if err != nil {
			return nil, err
		}
		if !t.slack && len(opts.Secret) == 0 {
			return nil, fmt.Errorf("%w: %s needs a secret (--approval-webhook-secret or $TOOLGATE_APPROVAL_WEBHOOK_SECRET) to sign its notifications", ErrWebhookConfig, t.host)
		}
		n.targets = append(n.targets, t)
	}
	n.ctx, n.cancel = context.WithCancel(context.Background())
	for _, t := range n.targets {
		n.wg.Add(1)
		go n.work(t)
	}
	return n, nil
}

// newWebhookTarget checks one URL: absolute http or https, with a host.
func newWebhookTarget(raw string, queue int) (*webhookTarget, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL itself is not repeated: it may hold a secret.
		return nil, fmt.Errorf("%w: a webhook URL must be an absolute http or https URL", ErrWebhookConfig)
	}
	return &webhookTarget{url: raw, slack: isSlackWebhook(u), host: u.Scheme + "://" + u.Host,
		queue: make(chan Approval, queue)}, nil
}

// isSlackWebhook reports whether u is a Slack incoming webhook, which takes
// Slack's message body instead of ours.
func isSlackWebhook(u *url.URL) bool {
	return u.Scheme == "https" && strings.EqualFold(u.Hostname(), "hooks.slack.com") &&
		strings.HasPrefix(u.Path, "/services/")
}

// checkPublicURL requires an absolute http or https URL without
// credentials, query or fragment: links are built by appending to it, and
// they are sent to every receiver.
func checkPublicURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%w: the public URL must be an absolute http or https URL without credentials, query or fragment", ErrWebhookConfig)
	}
	return nil
}

// Notify queues a new ask for every URL without waiting. A URL whose queue
// is full, or a closed notifier, drops it (counted by Dropped).
func (n *Notifier) Notify(a Approval) {
	if n.ctx.Err() != nil {
		n.dropped.Add(uint64(len(n.targets)))
		return
	}
	for _, t := range n.targets {
		select {
		case t.queue <- a:
		default:
			n.dropped.Add(1)
			n.logDrop(t, a.ID)
		}
	}
}

// logDrop logs a drop for a full queue, at most once a second per URL; the
// counter has them all.
func (n *Notifier) logDrop(t *webhookTarget, id string) {
	now, last := time.Now().UnixNano(), t.lastDropLog.Load()
	if now-last < int64(time.Second) || !t.lastDropLog.CompareAndSwap(last, now) {
		return
	}
	n.opts.Logger.Warn("approval webhook: queue full, notification dropped (logged at most once a second)",
		"webhook", t.host, "approval", id, "queue", cap(t.queue), "dropped_total", n.dropped.Load())
}

// Follow hands every new ask of m to Notify until m shuts down or the
// notifier closes. The manager never waits for it: its subscription is a
// buffered channel, and if it ever lagged the manager would drop it, after
// which Follow subscribes again.
//
// The first subscription is made before Follow returns, so no ask created
// after it is missed.
func (n *Notifier) Follow(m *Manager) {
	events, cancel := m.SubscribeFilter(Filter{}, followBuffer)
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			n.forward(events)
			cancel()
			select {
			case <-m.Done():
				return
			case <-n.ctx.Done():
				return
			default:
				n.opts.Logger.Warn("approval webhook: subscription lagged; subscribing again (asks in between are not notified)")
			}
			events, cancel = m.SubscribeFilter(Filter{}, followBuffer)
		}
	}()
}

// forward notifies the requested events of one subscription until it ends
// or the notifier closes.
func (n *Notifier) forward(events <-chan Event) {
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return
			}
			if ev.Type == EventRequested && ev.Local {
				n.Notify(ev.Approval)
			}
		case <-n.ctx.Done():
			return
		}
	}
}

// Close stops the workers: a try in flight is cancelled, and notifications
// still queued are dropped (counted and logged). It waits for the workers
// and for Follow to end.
func (n *Notifier) Close() {
	n.once.Do(n.cancel)
	n.wg.Wait()
}

// Sent is the number of notifications a receiver accepted (2xx).
func (n *Notifier) Sent() uint64 { return n.sent.Load() }

// Failed is the number of notifications given up after their tries, or
// refused by the receiver.
func (n *Notifier) Failed() uint64 { return n.failed.Load() }

// Dropped is the number of notifications never tried to the end: their
// queue was full, or the notifier stopped first.
func (n *Notifier) Dropped() uint64 { return n.dropped.Load() }
