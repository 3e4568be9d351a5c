#!/usr/bin/env bash
# Installs the optional agent-runtime packages into the runtimes cache the tests use
# (.cache/runtimes, gitignored; AGENTWIRE_RUNTIMES_DIR overrides it). They are no dependency of
# agentwire (about 400 MB each: `npm ci` and the published package install neither); the
# runtime tests (test/runtimes/) run this when a package is missing, and .ci/run once.
# The versions are the ones src/runtimes/codex-runtime.ts (CODEX_PACKAGE) and
# src/runtimes/claude-runtime.ts (CLAUDE_PACKAGE) were written against; the runtime tests check
# that they agree.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${AGENTWIRE_RUNTIMES_DIR:-$PWD/.cache/runtimes}"
packages=("@openai/codex@0.169.0" "@anthropic-ai/claude-agent-sdk@0.3.332")

missing=()
for spec in "${packages[@]}"; do
  name="${spec%@*}"
  installed="$(node -e 'try { console.log(require(process.argv[1]).version) } catch { }' "$dir/node_modules/$name/package.json")"
  if [ "$installed" = "${spec##*@}" ]; then
    echo "runtimes: $spec already in $dir"
  else
    missing+=("$spec")
  fi
done
[ "${#missing[@]}" -eq 0 ] && exit 0
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{ "private": true, "description": "agentwire runtimes cache (npm run runtimes:install)" }' > "$dir/package.json"
echo "runtimes: installing ${missing[*]} into $dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "${missing[@]}"
