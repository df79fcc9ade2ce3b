package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// rawConn is one keep-alive HTTP/1.1 connection that sends prebuilt
// requests and reads the answers with a minimal parser. net/http's client
// costs about as much CPU per request as the server does, and the issue's
// figures are taken with the load generator sharing the server's 2 cores,
// so a lean client leaves the cores to what is measured.
type rawConn struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
}

// buildRequest renders one POST with its headers.
func buildRequest(host, path, token string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		path, host, token, len(body))
	b.Write(body)
	return b.Bytes()
}

// do sends req and reads the whole answer; it returns the status code.
func (c *rawConn) do(req []byte, deadline time.Time) (int, error) {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
		if err != nil {
			return 0, err
		}
		c.conn, c.r = conn, bufio.NewReaderSize(conn, 64<<10)
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
	if _, err := c.conn.Write(req); err != nil {
		return 0, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	length, chunked := -1, false
	for {
		h, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		h = bytes.TrimRight(h, "\r\n")
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		}
	}
	switch {
	case chunked:
		return status, c.discardChunks()
	case length >= 0:
		_, err = c.r.Discard(length)
		return status, err
	}
	return 0, errors.New("answer has neither Content-Length nor chunked encoding")
}

// discardChunks reads a chunked body to its end.
func (c *rawConn) discardChunks() error {
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.SplitN(line, []byte(";"), 2)[0])), 16, 64)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			for { // trailers, then the final empty line
				t, err := c.r.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimRight(t, "\r\n")) == 0 {
					return nil
				}
			}
		}
		if _, err := io.CopyN(io.Discard, c.r, size+2); err != nil {
			return err
		}
	}
}
