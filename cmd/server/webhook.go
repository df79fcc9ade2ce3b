package main

import (
	"flag"
	"log/slog"
	"net"
	"strings"

	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/observe"
	"github.com/toolgate/toolgate/redact"
)

// webhookSecretEnv is where the webhook secret is read from when the flag is
// not given (preferred: a flag shows in the process list).
const webhookSecretEnv = "TOOLGATE_APPROVAL_WEBHOOK_SECRET"

// webhookConfig are the flags of approval notifications.
type webhookConfig struct {
	urls      urlList
	secret    string
	publicURL string
}

// urlList is a repeatable flag.
type urlList []string

func (l *urlList) String() string { return strings.Join(*l, ",") }

func (l *urlList) Set(s string) error {
	*l = append(*l, s)
	return nil
}

// register adds the flags. The secret's default is not shown in the help:
// it is read from the environment only after parsing.
func (w *webhookConfig) register(fs *flag.FlagSet) {
	fs.Var(&w.urls, "approval-webhook", "URL to POST each new ask to, signed with the webhook secret (repeatable; a Slack incoming webhook URL gets a Slack message)")
	fs.StringVar(&w.secret, "approval-webhook-secret", "", "key of the X-Toolgate-Signature HMAC of each webhook body (default $"+webhookSecretEnv+")")
	fs.StringVar(&w.publicURL, "public-url", "", "base URL of the admin pages, for the links in notifications (default http://<--addr>)")
}

// wireWebhooks starts the approval notifier when --approval-webhook is
// given: it follows the manager's new asks, its counters go to the metrics,
// and it stops after the manager at shutdown.
func wireWebhooks(c config, getenv func(string) string, mgr *approval.Manager, m *observe.Metrics, a *app, log *slog.Logger) error {
	if len(c.webhooks.urls) == 0 {
		return nil
	}
	secret := c.webhooks.secret
	if secret == "" {
		secret = getenv(webhookSecretEnv)
	}
	public := c.webhooks.publicURL
	if public == "" {
		public = defaultPublicURL(c.addr)
	}
	n, err := approval.NewNotifier(approval.WebhookOptions{URLs: c.webhooks.urls, Secret: []byte(secret),
		PublicURL: public, Summarize: redact.Summarize, Redact: redact.Text, Logger: log})
	if err != nil {
		return err
	}
	n.Follow(mgr)
	m.RegisterApprovalWebhooks(n)
	a.stoppers = append(a.stoppers, n.Close)
	log.Info("approval webhooks on", "webhooks", len(c.webhooks.urls), "public_url", public)
	return nil
}

// defaultPublicURL is http://<addr>, with localhost for an address that
// names no host (":8765", "0.0.0.0:8765"), whose links then only work on
// this machine: set --public-url.
func defaultPublicURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
