package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolgate/toolgate/cmd/internal/mcpgate"
)

// defaultMCPListen is where toolgate mcp --upstream serves when --listen
// does not say: loopback, the port after the server's default.
const defaultMCPListen = "127.0.0.1:8766"

// httpOptions are toolgate mcp's flags for a Streamable HTTP server.
type httpOptions struct {
	upstream    string
	listen      string
	allowRemote bool
	origins     stringList
	upstreamURL *url.URL
}

// stringList is a flag given any number of times.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func addHTTPFlags(fs *flag.FlagSet, h *httpOptions) {
	fs.StringVar(&h.upstream, "upstream", "", "the endpoint URL of a Streamable HTTP MCP server to stand in front of (instead of a command after --)")
	fs.StringVar(&h.listen, "listen", "", "with --upstream: the address the gateway serves the same endpoint path on (default "+defaultMCPListen+"; loopback only unless --allow-remote)")
	fs.BoolVar(&h.allowRemote, "allow-remote", false, "with --upstream: allow a --listen address other machines reach (the gateway does not authenticate its clients)")
	fs.Var(&h.origins, "allow-origin", "with --upstream: a browser Origin (scheme://host:port) allowed besides loopback ones; repeatable")
}

// check reads the HTTP flags against the command; it returns what is
// wrong, or "".
func (h *httpOptions) check(command []string) string {
	if h.upstream == "" {
		if h.listen != "" || h.allowRemote || len(h.origins) > 0 {
			return "--listen, --allow-remote and --allow-origin go with --upstream"
		}
		return ""
	}
	if len(command) > 0 {
		return "give either --upstream URL or a command after --, not both"
	}
	u, err := url.Parse(h.upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "--upstream must be an http(s) URL"
	}
	h.upstreamURL = u
	if h.listen == "" {
		h.listen = defaultMCPListen
	}
	host, _, err := net.SplitHostPort(h.listen)
	if err != nil {
		return fmt.Sprintf("--listen %q is not host:port", h.listen)
	}
	if !h.allowRemote && (host == "" || !mcpgate.IsLoopback(host)) {
		return fmt.Sprintf("--listen %q is not a loopback address; the gateway does not authenticate its clients, so serving other machines takes --allow-remote", h.listen)
	}
	return ""
}

// defaultName is the server's name when --name does not say: the
// upstream's host name, in the characters a tool name keeps.
func (h *httpOptions) defaultName() string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, h.upstreamURL.Hostname())
}

// shown is the upstream as printed: without its query or credentials,
// which may hold a key.
func (h *httpOptions) shown() string {
	return h.upstreamURL.Scheme + "://" + h.upstreamURL.Host + h.upstreamURL.Path
}

// serveMCPHTTP serves the gateway until ctx ends (a signal).
func serveMCPHTTP(ctx context.Context, o *mcpOptions, token string, stderr io.Writer) int {
	ln, err := net.Listen("tcp", o.http.listen)
	if err != nil {
		return failed(stderr, "toolgate mcp", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	proxy := &mcpgate.Proxy{Decider: &checkDecider{o: o, token: token}, Log: log, Upstream: o.http.upstreamURL,
		Origins: o.http.origins, Transport: http.DefaultTransport}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	path := o.http.upstreamURL.Path
	if path == "" {
		path = "/"
	}
	fmt.Fprintf(stderr, "toolgate mcp: serving http://%s%s in front of %s, its tools decided as mcp__%s__TOOL\n", ln.Addr(), path, o.http.shown(), o.name)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
		// Event streams stay open: they get a moment, then are cut.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
		err = <-served
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return failed(stderr, "toolgate mcp", err)
	}
	return exitOK
}
