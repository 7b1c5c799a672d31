#!/usr/bin/env bash
# Fetch the real third-party PDFs the tests and benchmarks use, from Debian's packages, unpacked
# into tests/data/cache/: countreg.pdf (r-cran-pscl), lmer.pdf (r-cran-lme4), xtableGallery.pdf
# (r-cran-xtable), zoo.pdf (r-cran-zoo), generalsiminf.pdf (r-cran-multcomp), and R-exts.pdf and
# fullrefman.pdf (r-doc-pdf; the 2,415-page reference manual is for bench/ingest.py only).
# Idempotent: fetches nothing when every PDF is already there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache="$here/cache"
pdfs=(countreg lmer xtableGallery zoo generalsiminf R-exts fullrefman)
missing=0
for name in "${pdfs[@]}"; do [ -s "$cache/$name.pdf" ] || missing=1; done
[ "$missing" = 0 ] && exit 0
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
packages=(r-cran-pscl r-cran-lme4 r-cran-xtable r-cran-zoo r-cran-multcomp r-doc-pdf)
if ! apt-get download "${packages[@]}" >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  apt-get download "${packages[@]}" >/dev/null
fi
for deb in ./*.deb; do dpkg -x "$deb" x; done
for name in "${pdfs[@]}"; do
  found=$(find x -name "$name.pdf" | head -n1)
  [ -n "$found" ] || { echo "no $name.pdf in ${packages[*]}" >&2; exit 1; }
  cp "$found" "$cache/$name.pdf"
done
echo "fetched test PDFs into $cache"
