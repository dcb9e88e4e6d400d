#!/usr/bin/env bash
# Installs the Debian 12 packages pacer builds with, when they are missing.
# As root it installs them; otherwise it prints the one apt line to run and fails.
#   scripts/deps.sh [EXTRA_PACKAGE...]   (e.g. clang libclang-rt-14-dev for fuzzing)
# Optional, for benchmarks only (no test needs them): wrk (bench/http.sh's closed-loop
# comparison), installed by that script through `scripts/deps.sh wrk`; GNU time (bench/soak.sh's
# whole-process peak RSS), likewise through `scripts/deps.sh time`.
set -euo pipefail

packages=(
    cmake ninja-build g++ pkg-config ccache
    libboost1.81-dev libboost-json1.81-dev
    libgtest-dev libgmock-dev libbenchmark-dev
    libcli11-dev libfmt-dev libsndfile1-dev libssl-dev libsamplerate0-dev espeak-ng
    liburing-dev # PACER_IO_URING=ON (Asio's io_uring backend)
    "$@"
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "pacer: missing packages; run: sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "pacer: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
