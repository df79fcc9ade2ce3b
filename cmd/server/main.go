// Command server runs toolgate: the permission service that decides allow,
// ask or deny for every tool call an AI agent wants to make.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "toolgate:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	addr            string
	configDir       string
	workspace       string
	approvalTimeout time.Duration
	// hookWait is how long an agent hook waits for a person.
	hookWait time.Duration
	// hookAsk is what an agent hook does with an ask (--hook-ask).
	hookAsk string
	// authFailures is how many failed sign-ins a minute an address has
	// before it is slowed (--auth-failures-per-minute; 0: never).
	authFailures int
	// pendingPerToken and pendingPerSession cap the pending asks.
	pendingPerToken, pendingPerSession int
	// workspaceSet says --workspace was given: hooks then pin it.
	workspaceSet bool
	logFormat    string
	logLevel     string
	// The decision log.
	decisionLog  bool
	logFullArgs  bool
	logRetention time.Duration
	logMaxRows   int64
	// gcPercent is the garbage collector's target (see applyGCPercent).
	gcPercent int
	// webhooks are the approval notification flags.
	webhooks webhookConfig
	// memory bounds the heap of a large policy (memory.go).
	memory memoryConfig
	// databaseURL, when set, keeps the shared state in PostgreSQL.
	databaseURL string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("toolgate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8765", "address to listen on (loopback by default)")
	fs.StringVar(&c.configDir, "config-dir", "", "config dir (default $JIUWENSWARM_CONFIG_DIR, else ~/.jiuwenswarm/config)")
	fs.StringVar(&c.workspace, "workspace", "", "the agents' workspace when a request names none (default: the current directory)")
	fs.DurationVar(&c.approvalTimeout, "approval-timeout", 300*time.Second, "how long an ask waits for a person before it is denied")
	fs.DurationVar(&c.hookWait, "hook-wait", 120*time.Second, "how long an agent hook (/api/v1/hooks/...) waits for a person's answer when the request names no wait_seconds (at most 10m)")
	fs.IntVar(&c.authFailures, "auth-failures-per-minute", auth.DefaultThrottleBurst, "failed sign-ins or wrong bearer tokens an address may send in a minute; after that each wrong one waits and gets 429 until the minute ends (a valid token always passes; 0: no limit)")
	fs.IntVar(&c.pendingPerToken, "max-pending-per-token", service.DefaultPendingCaps.PerToken, "the most asks one token may have waiting for a person; beyond it an ask is refused with 429")
	fs.IntVar(&c.pendingPerSession, "max-pending-per-session", service.DefaultPendingCaps.PerSession, "the most asks one session of a token may have waiting for a person; beyond it an ask is refused with 429")
	fs.StringVar(&c.hookAsk, "hook-ask", string(api.HookAskWait), "what an agent hook does with an ask when the hook names no mode: wait (for a person, then allow or deny) or agent (hand it to the agent's own prompt; weaker: an agent in a bypass mode runs it)")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.BoolVar(&c.decisionLog, "decision-log", true, "keep a log of every decision in <config-dir>/decisions.db")
	fs.BoolVar(&c.logFullArgs, "log-full-args", false, "also log the full (redacted) arguments of each call, for the impact preview")
	fs.DurationVar(&c.logRetention, "log-retention", 720*time.Hour, "how long decision log entries are kept")
	fs.Int64Var(&c.logMaxRows, "log-max-rows", 1_000_000, "the most decision log entries kept")
	fs.IntVar(&c.gcPercent, "gc-percent", defaultGCPercent, "garbage collector target: the heap may grow by this percentage of the live heap before a collection (the GOGC environment variable wins when set)")
	c.webhooks.register(fs)
	c.memory.register(fs)
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL URL (postgres://...) holding the policy, tokens, sessions, approvals and decision log, shared by every replica; empty: the config dir's files (default $"+databaseURLEnv+")")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.databaseURL == "" {
		// Read after parsing, so that the help never shows its password.
		c.databaseURL = strings.TrimSpace(os.Getenv(databaseURLEnv))
	}
	c.workspaceSet = c.workspace != ""
	if c.pendingPerToken < 1 || c.pendingPerSession < 1 {
		return c, fmt.Errorf("--max-pending-per-token and --max-pending-per-session must be at least 1")
	}
	if _, ok := api.ParseHookAskMode(c.hookAsk); !ok {
		return c, fmt.Errorf("--hook-ask must be wait or agent, not %q", c.hookAsk)
	}
	if c.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return c, fmt.Errorf("workspace: %w", err)
		}
		c.workspace = wd
	}
	return c, nil
}

// defaultGCPercent is the -gc-percent default. toolgate's live heap is
// small for a usual policy (a large one is bounded by -heap-headroom-mb,
// memory.go) while every request allocates, so
// at Go's default of 100 the collector runs very often; at 400 it costs
// about a third of the CPU per evaluation it did (BENCHMARKS.md), for a heap
// of up to five times the live one.
const defaultGCPercent = 400

// applyGCPercent sets the collector's target from -gc-percent unless GOGC
// is set in the environment, which the runtime has already applied.
func applyGCPercent(c config, getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(c.gcPercent)
	}
}

func newLogger(c config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.logLevel))
	opts := &slog.HandlerOptions{Level: level}
	if c.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log := newLogger(c, stderr)
	slog.SetDefault(log)
	app, err := wire(c, log)
	if err != nil {
		return err
	}
	defer app.close()

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	srv := &http.Server{
		Handler:           app.handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		// Long polls of /api/v1/check and approvals wait up to 600 s.
		WriteTimeout:   11 * time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	announce(stdout, log, ln.Addr().String(), app.tokenFile, c.addr)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	case <-ctx.Done():
		log.Info("shutting down")
		app.shutdown()
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
	}
	return nil
}

// announce prints where the server listens, and warns when that is not loopback.
func announce(stdout io.Writer, log *slog.Logger, addr, tokenFile, requested string) {
	fmt.Fprintf(stdout, "toolgate listening on http://%s/ (admin UI); log in with the token in %s\n", addr, tokenFile)
	host, _, _ := net.SplitHostPort(requested)
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		log.Warn("listening beyond loopback: anyone who can reach this address can try tokens", "addr", requested)
		fmt.Fprintf(stdout, "WARNING: toolgate is listening on %s, not only on loopback\n", requested)
	}
}
