package api_test

import (
	"context"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	toolgate "github.com/toolgate/toolgate"
	"github.com/toolgate/toolgate/api"
	"github.com/toolgate/toolgate/approval"
	"github.com/toolgate/toolgate/inforce"
	"github.com/toolgate/toolgate/service"
	"github.com/toolgate/toolgate/store/auth"
)

// mountedBy is the extension an openapi.yaml operation carries when a
// package other than api mounts it (such as "web" for /ws); the route tree
// of this test does not hold those.
const mountedBy = "x-toolgate-mounted-by"

// routeTree builds the API's route tree the way cmd/server wires it, over
// a real store and token set in a temp config dir.
func routeTree(t *testing.T) chi.Router {
	t.Helper()
	dir := t.TempDir()
	st, err := inforce.Open(dir, inforce.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	tokens, _, err := auth.OpenTokens(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	mgr := approval.New(approval.Options{Persister: service.NewPolicy(st)})
	t.Cleanup(mgr.Shutdown)
	api.New(api.Deps{Policy: st, Tokens: tokens, Approvals: mgr, OpenAPI: toolgate.OpenAPI}).Mount(r)
	return r
}

var chiParam = regexp.MustCompile(`\{([^}:]+)(:[^}]*)?\}`)

// TestRoutesMatchOpenAPI fails when a mounted route (method and path) is
// missing from openapi.yaml or openapi.yaml documents a route that is not
// mounted. Document a new route in openapi.yaml to keep it green.
func TestRoutesMatchOpenAPI(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(toolgate.OpenAPI)
	if err != nil {
		t.Fatalf("openapi.yaml does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid: %v", err)
	}
	mounted := map[string]bool{}
	err = chi.Walk(routeTree(t), func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		route = chiParam.ReplaceAllString(strings.TrimSuffix(route, "/*"), "{$1}")
		if len(route) > 1 {
			route = strings.TrimSuffix(route, "/")
		}
		mounted[method+" "+route] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if _, elsewhere := op.Extensions[mountedBy]; elsewhere {
				continue
			}
			documented[method+" "+path] = true
		}
	}
	for _, k := range slices.Sorted(maps.Keys(mounted)) {
		if !documented[k] {
			t.Errorf("route %s is mounted but not in openapi.yaml: document it", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(documented)) {
		if !mounted[k] {
			t.Errorf("openapi.yaml documents %s but no such route is mounted (mark routes another package mounts with %s)", k, mountedBy)
		}
	}
}
