#!/bin/sh
# install.sh installs the pinned agents the integration tests drive, each
# from the npm registry into its own folder of the cache, once:
#   $TOOLGATE_AGENTS_DIR (default ~/.cache/toolgate/agents)/<package>-<version>
# A folder that already holds the package's marker file is kept as it is.
set -eu
dir="${TOOLGATE_AGENTS_DIR:-$HOME/.cache/toolgate/agents}"
mkdir -p "$dir"

# install NAME VERSION PACKAGE MARKER: npm-installs PACKAGE@VERSION into
# $dir/NAME-VERSION unless MARKER (a path inside it) exists.
install() {
	target="$dir/$1-$2"
	if [ -e "$target/$4" ]; then
		return 0
	fi
	echo "installing $3@$2 into $target"
	rm -rf "$target.tmp"
	mkdir -p "$target.tmp"
	npm install --prefix "$target.tmp" --no-audit --no-fund --loglevel=error "$3@$2" >/dev/null
	rm -rf "$target"
	mv "$target.tmp" "$target"
}

install claude-code 2.1.328 @anthropic-ai/claude-code-linux-x64 node_modules/@anthropic-ai/claude-code-linux-x64/claude
install codex 0.169.0 @openai/codex node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex
install gemini-cli 0.61.0 @google/gemini-cli node_modules/@google/gemini-cli/bundle/gemini.js
# The MCP server the gateway tests stand in front of.
install server-filesystem 2026.8.31 @modelcontextprotocol/server-filesystem node_modules/@modelcontextprotocol/server-filesystem/dist/index.js
