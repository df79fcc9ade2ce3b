package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

// openAPIRouter loads ../openapi.yaml once.
func openAPIRouter(t testing.TB) routers.Router {
	t.Helper()
	specOnce.Do(func() {
		data, err := os.ReadFile("../openapi.yaml")
		if err != nil {
			specErr = err
			return
		}
		doc, err := openapi3.NewLoader().LoadFromData(data)
		if err != nil {
			specErr = err
			return
		}
		doc.Servers = openapi3.Servers{{URL: "http://127.0.0.1"}}
		specRouter, specErr = legacy.NewRouter(doc)
	})
	if specErr != nil {
		t.Fatalf("openapi.yaml: %v", specErr)
	}
	return specRouter
}

// ValidateResponse checks a real response against openapi.yaml: the route
// and status must be documented and the body must match its schema.
func ValidateResponse(t testing.TB, method, path string, status int, header http.Header, body []byte) {
	t.Helper()
	u, err := url.Parse("http://127.0.0.1" + path)
	if err != nil {
		t.Fatal(err)
	}
	req := &http.Request{Method: method, URL: u, Header: http.Header{}}
	route, params, err := openAPIRouter(t).FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s is not in openapi.yaml: %v", method, path, err)
	}
	if header == nil {
		header = http.Header{}
	}
	if header.Get("Content-Type") == "" && len(body) > 0 {
		header = header.Clone()
		header.Set("Content-Type", "application/json")
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s -> %d does not match openapi.yaml: %v\nbody: %s", method, path, status, err, body)
	}
}

// Call sends a request with a token, checks the answer against openapi.yaml
// and returns status and body.
func (s *Server) Call(token, method, path string, body any, header http.Header) (int, http.Header, []byte) {
	s.t.Helper()
	resp := s.Request(token, method, path, body, header)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	ValidateResponse(s.t, method, path, resp.StatusCode, resp.Header, data)
	return resp.StatusCode, resp.Header, data
}
