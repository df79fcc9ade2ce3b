package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
)

// noopAnswer is the size and shape of a real evaluate answer.
const noopAnswer = `{"level":"ask","matched_rule":"tools.bash","reason":"Approval required for bash (rule: tools.bash)"}` + "\n"

// serveNoop runs a net/http server on addr (loopback only) that answers
// every request with noopAnswer after reading its body, without auth,
// routing, JSON or a decision. Driven like toolgate, it shows what HTTP
// alone costs on the machine: the floor under toolgate's figures.
func serveNoop(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-serve-noop must be a loopback address, got %q", addr)
	}
	srv := &http.Server{Addr: addr, Handler: http.HandlerFunc(noopHandler)}
	fmt.Println("no-op server on", addr)
	return srv.ListenAndServe()
}

func noopHandler(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, noopAnswer)
}
