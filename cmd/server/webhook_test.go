package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestDefaultPublicURL(t *testing.T) {
	tests := []struct{ note, addr, want string }{
		{"loopback", "127.0.0.1:8765", "http://127.0.0.1:8765"},
		{"no host", ":8765", "http://localhost:8765"},
		{"all IPv4 interfaces", "0.0.0.0:9000", "http://localhost:9000"},
		{"all IPv6 interfaces", "[::]:9000", "http://localhost:9000"},
		{"IPv6 loopback keeps its brackets", "[::1]:8765", "http://[::1]:8765"},
		{"a name", "toolgate.internal:80", "http://toolgate.internal:80"},
	}
	for _, tc := range tests {
		if got := defaultPublicURL(tc.addr); got != tc.want {
			t.Errorf("%s: defaultPublicURL(%q) = %q, want %q", tc.note, tc.addr, got, tc.want)
		}
	}
}

func TestWebhookFlags(t *testing.T) {
	t.Setenv(webhookSecretEnv, "env-secret-value")
	var help bytes.Buffer
	c, err := parseFlags([]string{"--approval-webhook", "https://a.example/1", "--approval-webhook", "https://b.example/2",
		"--public-url", "https://tg.example"}, &help)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.webhooks.urls, " "); got != "https://a.example/1 https://b.example/2" {
		t.Errorf("urls: got %q, want both, in order", got)
	}
	if c.webhooks.secret != "" || c.webhooks.publicURL != "https://tg.example" {
		t.Errorf("secret/public: got %q/%q, want the env read later and the flag's URL", c.webhooks.secret, c.webhooks.publicURL)
	}
	_, _ = parseFlags([]string{"-h"}, &help)
	if strings.Contains(help.String(), "env-secret-value") {
		t.Errorf("the help must not show the secret from the environment")
	}
	if !strings.Contains(help.String(), "approval-webhook-secret") {
		t.Errorf("the help should list --approval-webhook-secret: %s", help.String())
	}
}

func TestWireWebhooksRefusesUnsignedPlainURL(t *testing.T) {
	c := config{addr: "127.0.0.1:8765", webhooks: webhookConfig{urls: urlList{"https://receiver.example/hook"}}}
	err := wireWebhooks(c, func(string) string { return "" }, nil, nil, &app{}, nil)
	if err == nil || !strings.Contains(err.Error(), "needs a secret") {
		t.Errorf("got %v, want an error asking for the secret", err)
	}
}
