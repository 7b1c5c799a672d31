#!/usr/bin/env bash
# Real browser-use run histories for the consensus importer's tests, in tests/data/cache/browser-use-logs/:
# browser-use (PyPI, MIT, pinned) is installed into its own venv (tests/data/cache/browser-use-venv, apart
# from ours: it pins its own pydantic, openai, mcp …) and runs tests/data/browser_use_runs.py, which drives
# Debian's chromium over local pages with a TEST DOUBLE model (a scripted OpenAI-compatible server on
# 127.0.0.1); each history.json is written by browser-use itself. Idempotent; a failed build leaves nothing.
set -euo pipefail
VERSION=0.13.14
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/cache/browser-use-venv"
target="$here/cache/browser-use-logs"
stamp="$target/VERSION"
if [ -s "$stamp" ] && [ "$(cat "$stamp")" = "$VERSION" ]; then exit 0; fi
python=${PYTHON:-python3}
if ! "$venv/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('browser-use') != '$VERSION')" 2>/dev/null; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q "browser-use==$VERSION" || { rm -rf "$venv"; exit 1; }
fi
rm -rf "$target.tmp"
trap 'rm -rf "$target.tmp"' EXIT
HOME="$here/cache/browser-use-home" CHROMIUM=${CHROMIUM:-/usr/bin/chromium} "$venv/bin/python" "$here/browser_use_runs.py" "$target.tmp/runs"
[ "$(find "$target.tmp/runs" -name history.json | wc -l)" -eq 3 ] || { echo "build-browser-use-logs.sh: expected 3 histories" >&2; exit 1; }
echo "$VERSION" >"$target.tmp/VERSION"
rm -rf "$target"
mv "$target.tmp" "$target"
echo "built 3 browser-use histories (browser-use $VERSION) into $target"
