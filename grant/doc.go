// Package grant owns the grants people give when they answer an ask for a
// scope (docs/grants.md): "allow for this session" and "allow for a while".
//
// It holds the grant model (Grant, Scope), the Store interface its storages
// implement (store/grants: SQLite for one server, PostgreSQL for
// replicas), and the Book: the live grants of this replica, kept in
// step with the store (its own writes at once, other replicas' through the
// store's change notices and a periodic reload), and the engine that
// consults them (Book.Engine).
//
// Expiry is never left to a sweep: the engine checks each grant's
// expires_at against the clock at the moment of the call, so an expired
// grant decides nothing on any replica, to the second. A revoked grant is
// gone from a replica's Book as soon as the store's notice arrives.
//
// It does not decide calls (engine does, from the grants it is given), does
// not answer asks (approval does, and calls Book.Grant for the scoped
// choices) and does not write approval overrides ("always allow" is a
// policy edit, service's).
package grant
