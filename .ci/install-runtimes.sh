#!/usr/bin/env bash
# Installs the optional agent-runtime packages into the runtimes cache the tests use
# (.cache/runtimes, gitignored; AGENTWIRE_RUNTIMES_DIR overrides it). They are no dependency of
# agentwire (about 400 MB each: `npm ci` and the published package install neither); the
# runtime tests (test/runtimes/) run this when the package is missing, and .ci/run once.
# The version is the one src/runtimes/codex-runtime.ts (CODEX_PACKAGE) was written against;
# test/runtimes/codex-runtime.test.ts checks the two agree.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${AGENTWIRE_RUNTIMES_DIR:-$PWD/.cache/runtimes}"
codex="@openai/codex@0.169.0"

installed="$(node -e 'try { console.log(require(process.argv[1]).version) } catch { }' "$dir/node_modules/@openai/codex/package.json")"
if [ "$installed" = "${codex##*@}" ]; then
  echo "runtimes: $codex already in $dir"
  exit 0
fi
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{ "private": true, "description": "agentwire runtimes cache (npm run runtimes:install)" }' > "$dir/package.json"
echo "runtimes: installing $codex into $dir"
npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$codex"
