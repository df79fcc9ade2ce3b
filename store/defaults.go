package store

// DefaultConfig is the config.yaml written on first start (docs/configuration.md#permissions-keys): a
// safe policy that asks for anything not known to be read-only.
const DefaultConfig = `# JiuwenSwarm configuration, written by toolgate on first start.
# toolgate reads and writes only the "permissions" section below; any other
# top-level keys and all comments you add to this file are kept on every write.
# Edits are picked up without a restart; a broken file keeps the last good
# policy in force and is reported on /readyz.

permissions:
  # Master switch. When false every tool call is allowed: keep it on.
  enabled: true
  # tiered_policy turns on built-in security rules, your rules and approval
  # overrides; without it only the tool levels and defaults below apply.
  schema: tiered_policy
  # normal or strict. Strict maps rules of MEDIUM severity to ask and
  # CRITICAL to deny (normal: allow and ask).
  permission_mode: normal
  # The level (allow, ask or deny) of any tool that is not listed under tools.
  defaults:
    "*": ask
  # Whole-tool levels. deny here wins over everything else for that tool.
  tools:
    # Read-only path tools run directly.
    read_file: allow
    read_text_file: allow
    read: allow
    glob_file_search: allow
    glob: allow
    list_dir: allow
    list_files: allow
    grep: allow
    # Shell and writing tools need a person's approval.
    bash: ask
    mcp_exec_command: ask
    create_terminal: ask
    write_file: ask
    write_text_file: ask
    write: ask
    edit_file: ask
    search_replace: ask
  # Parameter-level rules: {id, tools, pattern, action or severity, match_type}.
  # A pattern is a glob ("git status *") or a regular expression ("re:...").
  rules: []
  # "Always allow" answers and /add-dir land here.
  approval_overrides: []
  # Paths outside the workspace: "*" is the level for any external path; add
  # a directory prefix with allow to trust it.
  external_directory:
    "*": ask
`
