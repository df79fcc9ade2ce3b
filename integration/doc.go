// Package integration holds tests that build and start the real toolgate
// binary on a free loopback port with a temp config dir, and drive it over
// HTTP, websocket and headless Chromium. The package itself is empty.
package integration
