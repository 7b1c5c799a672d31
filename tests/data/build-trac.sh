#!/usr/bin/env bash
# Trac 1.6 (PyPI trac) in its own venv, tests/data/cache/trac-venv, and the seeded environment
# tests/data/cache/trac-env built with it (tests/data/build-trac.py). Idempotent.
#
# Trac gets a venv of its own: in the project's venv, python-multipart (fastmcp's dependency)
# installs a `multipart` module that Trac 1.6 imports in place of the one it expects, and every
# POST then fails inside Trac (multipart.parse_options_header is missing).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/cache/trac-venv"
python=${PYTHON:-python3}
if [ ! -x "$venv/bin/tracd" ]; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'trac==1.6'
fi
"$venv/bin/python" "$here/build-trac.py"
