#!/usr/bin/env bash
# Roundup (PyPI roundup) in its own venv, tests/data/cache/roundup-venv, and the seeded tracker
# tests/data/cache/roundup-env built with it (tests/data/build-roundup.py). Idempotent.
#
# Roundup gets a venv of its own, as Trac does (tests/data/build-trac.sh): the tracker runs
# in its own process and needs nothing from the project's venv.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/cache/roundup-venv"
python=${PYTHON:-python3}
if [ ! -x "$venv/bin/roundup-server" ]; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check 'roundup==2.6.0'
fi
PYTHONHASHSEED=0 "$venv/bin/python" "$here/build-roundup.py"
