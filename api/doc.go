// Package api is toolgate's REST and JSON-RPC interface: thin chi handlers,
// one file per resource, that decode, validate, call the engine, store or
// approvals, and respond. Wire types live apart from domain types, and every
// error goes out through writeError.
package api
