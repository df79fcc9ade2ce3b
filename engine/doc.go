// Package engine is toolgate's pure decision logic: the policy model of the
// `permissions` section of config.yaml and the built-in rule list, compiled
// once into an immutable Engine that decides allow, ask or deny for a tool
// call. It does no I/O: filesystem facts (the home directory, symlink
// resolution) come in through Options. An Engine is safe for concurrent use.
// What a shell command runs is read by the shell subpackage, which the
// engine's rules are then matched against.
package engine
