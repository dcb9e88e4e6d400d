#!/usr/bin/env bash
# Installs what the conformance tests (ctest label `conformance`, tests/conformance/) run:
# Node.js and npm from Debian (packages nodejs and npm, through scripts/deps.sh) when `node` or
# `npm` is missing, then the npm packages pinned in tests/conformance/package.json and
# package-lock.json (the official `openai` SDK and `ws`) into BUILD_DIR/conformance/node_modules
# with `npm ci`. Does nothing when that folder already holds the locked versions.
#   scripts/node-deps.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    "$(pwd)/scripts/deps.sh" nodejs npm
fi
dest="$build_dir/conformance"
lock=tests/conformance/package-lock.json
if [ -d "$dest/node_modules" ] && cmp -s "$lock" "$dest/installed-package-lock.json"; then
    exit 0
fi
mkdir -p "$dest"
rm -f "$dest/installed-package-lock.json"
cp tests/conformance/package.json "$lock" "$dest/"
# No install scripts: the two packages need none.
(cd "$dest" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
cp "$lock" "$dest/installed-package-lock.json"
packages=$(cd "$dest" && npm ls --depth=0 --parseable --long | sed -n 's|.*/node_modules/[^:]*:||p')
echo "pacer: node $(node --version) with" $packages "in $dest/node_modules" >&2
