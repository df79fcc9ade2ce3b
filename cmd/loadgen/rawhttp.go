package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// buildRequest renders one POST with its headers.
func buildRequest(host, path, token string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		path, host, token, len(body))
	b.Write(body)
	return b.Bytes()
}

// buildGet renders one GET without a body. It carries the same
// Authorization header as the POSTs, so that the two differ in what the
// server does, not in what it parses.
func buildGet(host, path, token string) []byte {
	return fmt.Appendf(nil, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n\r\n", path, host, token)
}

// errBadResponse is a response the parser cannot read.
var errBadResponse = errors.New("bad HTTP response")

// parseResponse reads one HTTP/1.1 response from the start of buf. It
// returns the response's length and status once buf holds all of it, and
// a length of 0 while more bytes are needed. Both transports read into a
// buffer and call it, so there is one parser for them.
func parseResponse(buf []byte) (size, status int, err error) {
	head := bytes.Index(buf, []byte("\r\n\r\n"))
	if head < 0 {
		if len(buf) > 64<<10 {
			return 0, 0, fmt.Errorf("%w: header longer than 64 KiB", errBadResponse)
		}
		return 0, 0, nil
	}
	lines := bytes.Split(buf[:head], []byte("\r\n"))
	status, err = parseStatusLine(lines[0])
	if err != nil {
		return 0, 0, err
	}
	length, chunked := -1, false
	for _, h := range lines[1:] {
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, 0, fmt.Errorf("%w: Content-Length %q", errBadResponse, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		}
	}
	body := head + 4
	switch {
	case chunked:
		n, err := chunkedLength(buf[body:])
		if n == 0 || err != nil {
			return 0, 0, err
		}
		return body + n, status, nil
	case length >= 0:
		if len(buf) < body+length {
			return 0, 0, nil
		}
		return body + length, status, nil
	}
	return 0, 0, fmt.Errorf("%w: neither Content-Length nor chunked encoding", errBadResponse)
}

// parseStatusLine reads the code of "HTTP/1.x NNN reason".
func parseStatusLine(line []byte) (int, error) {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, fmt.Errorf("%w: status line %q", errBadResponse, line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("%w: status line %q", errBadResponse, line)
	}
	return status, nil
}

// chunkedLength is the length of a whole chunked body (chunks, trailers and
// the final empty line) at the start of b, or 0 while it is incomplete.
func chunkedLength(b []byte) (int, error) {
	at := 0
	for {
		eol := bytes.Index(b[at:], []byte("\r\n"))
		if eol < 0 {
			return 0, nil
		}
		sizeField, _, _ := bytes.Cut(b[at:at+eol], []byte(";"))
		size, err := strconv.ParseInt(string(bytes.TrimSpace(sizeField)), 16, 32)
		if err != nil || size < 0 {
			return 0, fmt.Errorf("%w: chunk size %q", errBadResponse, b[at:at+eol])
		}
		at += eol + 2
		if size == 0 {
			return trailersEnd(b, at)
		}
		if len(b) < at+int(size)+2 {
			return 0, nil
		}
		if !bytes.Equal(b[at+int(size):at+int(size)+2], []byte("\r\n")) {
			return 0, fmt.Errorf("%w: chunk not followed by CRLF", errBadResponse)
		}
		at += int(size) + 2
	}
}

// trailersEnd skips the trailer lines at b[at:] up to and including the
// empty line that ends a chunked body.
func trailersEnd(b []byte, at int) (int, error) {
	for {
		eol := bytes.Index(b[at:], []byte("\r\n"))
		if eol < 0 {
			return 0, nil
		}
		at += eol + 2
		if eol == 0 {
			return at, nil
		}
	}
}

// rawConn is one keep-alive HTTP/1.1 connection with one goroutine: the
// portable transport (-transport goroutines, and where there is no epoll).
// net/http's client costs about as much CPU per request as the server
// does, and the figures are taken with the load generator sharing
// the server's 2 cores, so a lean client leaves the cores to what is
// measured.
type rawConn struct {
	addr string
	conn net.Conn
	buf  []byte
}

// do sends req and reads the whole answer; it returns the status code.
// A kept-alive connection the server closed while it was idle fails
// before any answer arrives; then the request is sent once more on a new
// connection, as an HTTP client does.
func (c *rawConn) do(req []byte, deadline time.Time) (int, error) {
	reused := c.conn != nil
	status, err := c.try(req, deadline)
	if err != nil && reused && len(c.buf) == 0 {
		status, err = c.try(req, deadline)
	}
	return status, err
}

func (c *rawConn) try(req []byte, deadline time.Time) (int, error) {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
		if err != nil {
			return 0, err
		}
		c.conn, c.buf = conn, make([]byte, 0, 64<<10)
	}
	_ = c.conn.SetDeadline(deadline)
	status, err := c.roundTrip(req)
	if err != nil {
		c.conn.Close()
		c.conn = nil
	}
	return status, err
}

func (c *rawConn) roundTrip(req []byte) (int, error) {
	c.buf = c.buf[:0]
	if _, err := c.conn.Write(req); err != nil {
		return 0, err
	}
	for {
		if len(c.buf) == cap(c.buf) {
			c.buf = append(c.buf, 0)[:len(c.buf)]
		}
		n, err := c.conn.Read(c.buf[len(c.buf):cap(c.buf)])
		c.buf = c.buf[:len(c.buf)+n]
		size, status, perr := parseResponse(c.buf)
		switch {
		case perr != nil:
			return 0, perr
		case size > 0:
			return status, nil
		case err != nil:
			return 0, err
		}
	}
}
