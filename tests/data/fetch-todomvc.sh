#!/usr/bin/env bash
# Fetch TodoMVC's VanillaJS example (npm package todomvc@0.1.1, examples/vanillajs) into
# tests/data/cache/todomvc-vanillajs/, ready to serve as a static site. Idempotent.
#
# The example needs nothing outside its own folder: index.html loads
# bower_components/todomvc-common/base.{css,js} (+ bg.png from the CSS) and js/*.js, all shipped
# inside examples/vanillajs. base.js also asks for learn.json at the server root for its "learn"
# sidebar; it is deliberately not copied (the request 404s and the app works without it), so
# the page holds only the app itself.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
target="$here/cache/todomvc-vanillajs"
[ -s "$target/index.html" ] && [ -s "$target/bower_components/todomvc-common/base.js" ] && [ -s "$target/js/app.js" ] && exit 0
command -v npm >/dev/null 2>&1 || { echo "fetch-todomvc.sh: npm is needed (apt-get install npm)" >&2; exit 1; }
mkdir -p "$here/cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent todomvc@0.1.1 >/dev/null 2>"$work/npm.log") || { cat "$work/npm.log" >&2; exit 1; }
tar -xzf "$work"/todomvc-0.1.1.tgz -C "$work" package/examples/vanillajs
src="$work/package/examples/vanillajs"
for needed in index.html js/app.js bower_components/todomvc-common/base.js bower_components/todomvc-common/base.css bower_components/todomvc-common/bg.png; do
  [ -s "$src/$needed" ] || { echo "fetch-todomvc.sh: $needed missing from todomvc@0.1.1" >&2; exit 1; }
done
# Move into place in one step, so an interrupted run never leaves a half-filled folder behind.
rm -rf "$target.tmp"
mv "$src" "$target.tmp"
rm -rf "$target"
mv "$target.tmp" "$target"
echo "fetched TodoMVC VanillaJS into $target"
