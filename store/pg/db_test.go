package pg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/toolgate/toolgate/internal/pgtest"
)

// TestOpenUnreachable: no server on the port means ErrUnavailable, a bad
// URL does not.
func TestOpenUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx := context.Background()
	_, err = Open(ctx, "postgres://u:secretpw@"+addr+"/db?sslmode=disable", Options{OpTimeout: 2 * time.Second})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("closed port: err = %v, want ErrUnavailable", err)
	}
	_, err = Open(ctx, "postgres://u:secretpw@127.0.0.1:notaport/db", Options{})
	if err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("bad url: err = %v, want an error that is not ErrUnavailable", err)
	}
	if err != nil && strings.Contains(err.Error(), "secretpw") {
		t.Errorf("bad url: the error shows the password: %v", err)
	}
}

// TestOpenSilentServer: a peer that accepts the connection and never
// answers (a partition, a hung server) is unavailable after OpTimeout, not
// a hang.
func TestOpenSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	start := time.Now()
	_, err = Open(context.Background(), "postgres://u:p@"+ln.Addr().String()+"/db?sslmode=disable", Options{OpTimeout: 500 * time.Millisecond})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("silent server: err = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Open took %v against a silent server, want about OpTimeout", d)
	}
}

// TestUnreachable: which errors count as "the server cannot be reached".
func TestUnreachable(t *testing.T) {
	for _, tc := range []struct {
		note string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection failure 08006", &pgconn.PgError{Code: "08006"}, true},
		{"admin shutdown 57P01", fmt.Errorf("q: %w", &pgconn.PgError{Code: "57P01"}), true},
		{"starting up 57P03", &pgconn.PgError{Code: "57P03"}, true},
		{"too many connections 53300", &pgconn.PgError{Code: "53300"}, true},
		{"read-only standby 25006", &pgconn.PgError{Code: "25006"}, true},
		{"unique violation 23505", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error 42601", &pgconn.PgError{Code: "42601"}, false},
		{"caller cancelled", context.Canceled, false},
		{"caller deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false},
		{"eof", io.ErrUnexpectedEOF, true},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{"conn closed", pgconn.ErrConnClosed, true},
		{"plain error", errors.New("boom"), false},
	} {
		if got := Unreachable(tc.err); got != tc.want {
			t.Errorf("%s: Unreachable = %v, want %v", tc.note, got, tc.want)
		}
	}
	db := &DB{}
	live := context.Background()
	if err := db.Wrap(live, context.DeadlineExceeded, "op"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("operation timeout under a live caller: %v, want ErrUnavailable", err)
	}
	gone, cancel := context.WithTimeout(live, 0)
	defer cancel()
	<-gone.Done()
	if err := db.Wrap(gone, context.DeadlineExceeded, "op"); errors.Is(err, ErrUnavailable) {
		t.Errorf("the caller's own deadline: %v, want no ErrUnavailable", err)
	}
}

// TestOpenPoolSize: Options, then the URL's pool_max_conns, then
// DefaultMaxConns set the pool size.
func TestOpenPoolSize(t *testing.T) {
	dsn := pgtest.NewDSN(t)
	for _, tc := range []struct {
		note string
		url  string
		opt  int32
		want int32
	}{
		{"default", dsn, 0, DefaultMaxConns},
		{"url", dsn + "&pool_max_conns=3", 0, 3},
		{"options win", dsn + "&pool_max_conns=3", 7, 7},
	} {
		db, err := Open(context.Background(), tc.url, Options{MaxConns: tc.opt})
		if err != nil {
			t.Fatalf("%s: %v", tc.note, err)
		}
		if got := db.Pool().Config().MaxConns; got != tc.want {
			t.Errorf("%s: MaxConns = %d, want %d", tc.note, got, tc.want)
		}
		db.Close()
	}
}
