// Package api is toolgate's REST and JSON-RPC interface: thin chi handlers,
// one file per resource, that decode a request, call the engine (to decide)
// or a service (service.Policy, service.Approvals, service.Tokens: every use
// case the pages share), and respond. Wire types live apart from domain
// types; every error goes out through writeError, which asks the server's
// one classification (service.Classify) and turns its kind into the HTTP
// status (httpStatus, the only such place); every role check asks service's
// one table (require, service.Allowed).
package api
