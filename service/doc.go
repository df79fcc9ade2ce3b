// Package service holds every use case of toolgate once, for the three
// front doors that call it: REST (api/), JSON-RPC (api/rpc*.go) and the
// admin pages (web/). Handlers decode a request, call a service and write
// its answer; they decide nothing themselves.
//
// It owns:
//   - policy edits, each with an optional If-Match ETag (Policy: replace the
//     section, settings, tool levels, rules, approval overrides, external
//     directories, owner scopes), "always allow" and /add-dir, the impact
//     preview (Policy.Preview) and the export of the section as config.yaml;
//   - the one generator of rule and override ids (NewID);
//   - the one table of which role may do what (Allowed, Require);
//   - approvals (Approvals: create, wait, decide, list), including the deny
//     a /check gets when the ask cannot be stored;
//   - API tokens (Tokens: create, list, revoke);
//   - decision observation through an explicit Observation value;
//   - the one classification of errors into kind, code, field and message
//     (Classify), used by REST, JSON-RPC, the websocket and pages; a kind
//     becomes an HTTP status only at the HTTP door (api's httpStatus).
//
// It depends on storage only through the small interfaces of ports.go, which
// the file and SQLite implementations (store, store/auth, store/decisionlog,
// store/history, approval) and the PostgreSQL ones beside them (and store/asks) satisfy alike.
//
// Imports: policy <- engine <- store/*, approval <- service <- api, web.
package service
