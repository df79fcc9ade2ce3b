// Package policy is the typed model of the `permissions` section of
// config.yaml and of the built-in rules: Section, Rule, ExternalDirs and
// OwnerScopes, with the levels, modes and severities they use.
//
// It owns what the section means as data: which keys it has, what type each
// holds, and the problem (naming the field path, such as
// permissions.rules[3].action) a wrong value causes. Decoding is lenient, as
// docs/configuration.md#validation asks: a broken entry is reported and left out, the rest
// stands. Decoders sit at the edges: DecodeSection reads the map a YAML or
// JSON decoder produced, DecodeRules the built-in rules list, RuleFromForm a
// page's form values; CheckRuleInput and CheckSectionInput are the strict
// checks of request bodies, answering a *FieldError.
//
// It also owns two lists that must exist once: the argument keys whose
// values are paths (PathKeys, IsPathKey) and what an "always allow" answer
// remembers (AlwaysAllow, LiteralPattern, OverrideID, TrustedDirOverrides).
//
// What a pattern means, which tools exist and how a call is decided belong
// to the engine, which compiles a Section; policy imports nothing of the
// project, so engine, store, api and web all import it.
package policy
