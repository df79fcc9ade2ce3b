package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// defaultURL is the server when neither --url nor $TOOLGATE_URL says.
const defaultURL = "http://127.0.0.1:8765"

// maxBody caps what the client reads: a hook event on stdin and any answer
// (the server's own cap on bodies is 1 MiB).
const maxBody = 1 << 20

// conn is where the server is and how to authenticate.
type conn struct {
	url       string
	token     string
	tokenFile string
	// envToken is $TOOLGATE_TOKEN: read when neither flag names a token,
	// and never a flag's default, which usage text would print.
	envToken string
}

// serverURL is the default of --url: $TOOLGATE_URL, else defaultURL.
func serverURL(getenv func(string) string) string {
	return cmp.Or(getenv("TOOLGATE_URL"), defaultURL)
}

// addConnFlags adds --url, --token and --token-file to a flag set, with
// the environment's defaults.
func addConnFlags(fs *flag.FlagSet, c *conn, getenv func(string) string) {
	u := serverURL(getenv)
	fs.StringVar(&c.url, "url", u, "the toolgate server (default $TOOLGATE_URL, else "+defaultURL+")")
	c.envToken = getenv("TOOLGATE_TOKEN")
	fs.StringVar(&c.token, "token", "", "API token (default: $TOOLGATE_TOKEN); prefer --token-file or the variable, since flags show in ps")
	fs.StringVar(&c.tokenFile, "token-file", "", "read the API token from this file")
}

// resolve checks the URL and reads the token file; it returns the token.
func (c *conn) resolve() (string, error) {
	u, err := url.Parse(c.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("the server URL %q is not an http(s) URL", c.url)
	}
	c.url = strings.TrimRight(c.url, "/")
	token := c.token
	if token == "" {
		token = c.envToken
	}
	if c.tokenFile != "" {
		data, err := os.ReadFile(c.tokenFile)
		if err != nil {
			return "", fmt.Errorf("token file: %w", err)
		}
		token = strings.TrimSpace(string(data))
	}
	if token == "" {
		return "", errors.New("no API token: set $TOOLGATE_TOKEN, or pass --token-file")
	}
	return token, nil
}

// apiError is the server's error body.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"details"`
	} `json:"error"`
}

// statusError is a non-2xx answer of the server.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("toolgate answered %d: %s", e.status, e.msg)
}

// post sends body as JSON to path with the token and returns the answer's
// body when the status is 2xx; any other status is a *statusError with the
// server's message. timeout bounds the whole exchange.
func post(c conn, token, path string, body []byte, timeout time.Duration) ([]byte, error) {
	return postContext(context.Background(), c, token, path, body, timeout)
}

// postContext is post that also ends when ctx does (a call the MCP client
// cancelled stops waiting for its answer).
func postContext(ctx context.Context, c conn, token, path string, body []byte, timeout time.Duration) ([]byte, error) {
	data, _, err := exchange(ctx, c, token, http.MethodPost, path, body, "", timeout)
	return data, err
}

// exchange is one exchange with the server: method on path with body (no
// body when nil), the token, and If-Match when etag is set. It returns the
// answer's body and ETag when the status is 2xx; any other status is a
// *statusError with the server's message. timeout bounds it all.
func exchange(ctx context.Context, c conn, token, method, path string, body []byte, etag string, timeout time.Duration) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, rd)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if etag != "" {
		req.Header.Set("If-Match", etag)
	}
	client := &http.Client{
		// A redirect would send the token and the call elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("cannot reach toolgate at %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, "", fmt.Errorf("reading toolgate's answer: %w", err)
	}
	if len(data) > maxBody {
		return nil, "", fmt.Errorf("toolgate's answer is larger than %d bytes", maxBody)
	}
	if resp.StatusCode/100 != 2 {
		return nil, "", &statusError{status: resp.StatusCode, msg: errorMessage(data)}
	}
	return data, resp.Header.Get("ETag"), nil
}

// errorMessage is the message of an error body, with its fields; the raw
// body (cut short) when it is not one.
func errorMessage(data []byte) string {
	var e apiError
	if json.Unmarshal(data, &e) != nil || e.Error.Message == "" {
		s := strings.TrimSpace(string(data))
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		return s
	}
	msg := e.Error.Message
	for _, d := range e.Error.Details {
		if d.Field != "" && !strings.Contains(msg, d.Field) {
			msg += " (" + d.Field + ")"
		}
	}
	return msg
}
