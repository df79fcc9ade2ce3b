// Package docs holds toolgate's user documentation (the Markdown pages in
// this folder) and the tests that keep it true: every decision example in
// decisions.md is run against the engine, every flag and environment
// variable the binaries read appears in configuration.md, and every relative
// link in the README and these pages resolves.
package docs
