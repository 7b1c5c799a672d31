#!/usr/bin/env bash
# Fetch the real third-party PDFs the tests use: countreg.pdf (r-cran-pscl) and lmer.pdf
# (r-cran-lme4), from Debian's packages, unpacked into tests/data/cache/. Idempotent.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache="$here/cache"
[ -s "$cache/countreg.pdf" ] && [ -s "$cache/lmer.pdf" ] && exit 0
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download r-cran-pscl r-cran-lme4 >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  apt-get download r-cran-pscl r-cran-lme4 >/dev/null
fi
for deb in ./*.deb; do dpkg -x "$deb" x; done
cp "$(find x -name countreg.pdf | head -n1)" "$cache/countreg.pdf"
cp "$(find x -name lmer.pdf | head -n1)" "$cache/lmer.pdf"
echo "fetched test PDFs into $cache"
