package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
)

// sessionHeader names the MCP session a request belongs to; the proxy
// passes it on both ways and keeps its bookkeeping per session with it.
const sessionHeader = "Mcp-Session-Id"

// Proxy is the gateway in front of an MCP server that speaks the
// Streamable HTTP transport: a reverse proxy of the one MCP endpoint
// whose POSTed messages the judge reads first. Requests, responses,
// headers (the session's, the protocol version, Last-Event-ID for a
// resumed stream, the client's own Authorization for the server) and
// event streams pass unchanged, but for a refused call, answered here,
// and the answers to tools/list, filtered.
type Proxy struct {
	Decider Decider
	Log     *slog.Logger
	// Upstream is the MCP server's endpoint; the proxy serves the same
	// path.
	Upstream *url.URL
	// Origins are the browser origins allowed besides loopback ones
	// (scheme://host[:port]); any other Origin is refused, against DNS
	// rebinding.
	Origins []string
	// Transport reaches the upstream (default http.DefaultTransport).
	Transport http.RoundTripper

	once  sync.Once
	judge *judge
	rp    *httputil.ReverseProxy
}

// errRedirect refuses a redirect of the upstream.
var errRedirect = errors.New("it answered with a redirect, which the gateway does not pass on")

// listKey marks a request whose JSON answer holds a tools/list answer.
type listKey struct{}

// requestID carries the JSON-RPC id of a POSTed request, for the error
// answered when the upstream cannot be reached.
type requestID struct{}

func (p *Proxy) init() {
	p.judge = newJudge(p.Decider, p.Log)
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = cloneURL(p.Upstream)
			pr.Out.Host = ""
			// The proxy reads answers to filter them: it lets Go's
			// transport ask for (and undo) compression.
			pr.Out.Header.Del("Accept-Encoding")
		},
		Transport:      p.Transport,
		ErrorLog:       slog.NewLogLogger(p.judge.log.Handler(), slog.LevelDebug),
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.upstreamDown,
	}
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.once.Do(p.init)
	if why := p.refuse(r); why != "" {
		p.judge.log.Warn("mcp: request refused", "why", why, "remote", r.RemoteAddr)
		writeMessage(w, http.StatusForbidden, invalidRequest(nil, why))
		return
	}
	if r.URL.Path != endpointPath(p.Upstream) {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		// GET opens the server's event stream (filtered like any stream),
		// DELETE ends a session; both pass as they are.
		if r.Method == http.MethodDelete {
			defer p.judge.forget(r.Header.Get(sessionHeader))
		}
		p.rp.ServeHTTP(w, r)
		return
	}
	p.post(w, r)
}

// post judges one POSTed message and answers it here or passes it on.
func (p *Proxy) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxLine))
	if err != nil {
		writeMessage(w, http.StatusRequestEntityTooLarge, parseError("a message is longer than the gate reads"))
		return
	}
	scope := r.Header.Get(sessionHeader)
	st := p.judge.read(r.Context(), scope, body)
	if st.call != nil {
		forward, answer := p.judge.decide(st.call)
		switch {
		case forward:
			st.forward = true
		case answer != nil:
			st.answer = answer
		default:
			// The client cancelled the call (or went away): the request
			// still gets an answer, which the client drops.
			st.answer = rpcError(st.id, codeCancelled, "the call was cancelled before toolgate decided it")
		}
	}
	switch {
	case st.forward:
		ctx := context.WithValue(r.Context(), requestID{}, st.id)
		ctx = context.WithValue(ctx, listKey{}, st.list)
		out := r.WithContext(ctx)
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		p.rp.ServeHTTP(w, out)
	case st.answer != nil && st.id == nil:
		// An error about the whole message (unreadable, a batch with a
		// call) is a refused request.
		writeMessage(w, http.StatusBadRequest, st.answer)
	case st.answer != nil:
		writeMessage(w, http.StatusOK, st.answer)
	default:
		// A notification the gate keeps (a cancellation of a call never
		// sent on, a call sent as a notification) is accepted.
		w.WriteHeader(http.StatusAccepted)
	}
}

// modifyResponse filters the upstream's answers: every event stream
// (a POST's, or the GET stream, which may replay a POST's answers when
// resumed), and a JSON answer to a POST that held a tools/list.
func (p *Proxy) modifyResponse(resp *http.Response) error {
	if resp.StatusCode/100 == 3 {
		// The client would follow it past the gateway.
		resp.Body.Close()
		return errRedirect
	}
	scope := resp.Request.Header.Get(sessionHeader)
	if scope == "" {
		// The initialize answer starts the session it names.
		scope = resp.Header.Get(sessionHeader)
	}
	ctx := resp.Request.Context()
	media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case media == "text/event-stream":
		resp.Body = filterEvents(resp.Body, func(data []byte) ([]byte, bool) { return p.judge.filter(ctx, scope, data) })
	case media == "application/json" && ctx.Value(listKey{}) == true:
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxLine+1))
		resp.Body.Close()
		if err != nil {
			return err
		}
		if out, ok := p.judge.filter(ctx, scope, data); ok {
			data = out
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
		resp.ContentLength = int64(len(data))
		resp.Header.Set("Content-Length", strconv.Itoa(len(data)))
	}
	return nil
}

// upstreamDown answers a request the upstream could not be asked or
// answered. A request gets a JSON-RPC error answer naming the server's
// host, which the client reads as the call's failure; anything else (a
// notification, the event stream) a 502 with that error. The error names
// the host only: the server's URL may hold a key.
func (p *Proxy) upstreamDown(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // the client went away
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	p.judge.log.Warn("mcp: the upstream MCP server cannot be reached", "host", p.Upstream.Host, "err", err)
	id, _ := r.Context().Value(requestID{}).(json.RawMessage)
	status := http.StatusOK
	if id == nil {
		status = http.StatusBadGateway
	}
	writeMessage(w, status, rpcError(id, codeUpstream, "toolgate mcp cannot reach the MCP server at "+p.Upstream.Host+": "+err.Error()))
}

// refuse says why a request is refused before anything else, or "".
// A browser page may send requests to a loopback server (and, through
// DNS rebinding, as if from the server's own name): a request that came
// in on a loopback address must name a loopback host, and an Origin,
// which browsers send, must be a loopback one or an allowed one.
func (p *Proxy) refuse(r *http.Request) string {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && IsLoopback(local.String()) && !IsLoopback(r.Host) {
		return "the Host " + strconv.Quote(r.Host) + " is not this loopback gateway's"
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return ""
	}
	for _, o := range p.Origins {
		if strings.EqualFold(strings.TrimRight(o, "/"), origin) {
			return ""
		}
	}
	if u, err := url.Parse(origin); err == nil && (u.Scheme == "http" || u.Scheme == "https") && IsLoopback(u.Host) {
		return ""
	}
	return "the Origin " + strconv.Quote(origin) + " is not allowed"
}

// IsLoopback reports whether a host or host:port names this machine
// (localhost, 127.0.0.0/8, ::1).
func IsLoopback(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// endpointPath is the path the proxy serves: the upstream's.
func endpointPath(u *url.URL) string {
	if u.Path == "" {
		return "/"
	}
	return u.Path
}

func cloneURL(u *url.URL) *url.URL {
	c := *u
	return &c
}

// JSON-RPC error codes the proxy answers with (implementation-defined
// server errors).
const (
	codeUpstream  = -32000 // the upstream could not be reached
	codeCancelled = -32001 // the client cancelled a call being decided
)

// writeMessage answers one JSON-RPC message.
func writeMessage(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(msg)))
	w.WriteHeader(status)
	w.Write(msg)
}
