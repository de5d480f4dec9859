#!/usr/bin/env bash
# Every Debian package the tests need, in one apt-get (apt takes one lock: separate installs would only queue):
# R with data.table/readr/vroom (the R worker's own list), PostgreSQL's server, chromium with a font, Valgrind, a C
# compiler (for Valgrind's client requests), heaptrack and zstd (explain --metric memory) and Python 3.11 (the
# Conbench server's). Then perf, where Debian has it for this kernel (optional: its test skips where perf cannot
# sample). Idempotent: installs only what is missing, and refreshes the package lists only when they are missing or
# a day old.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t wanted < <(bash src/colbench/workers/r/install.sh --packages)
wanted+=(postgresql chromium fonts-dejavu-core valgrind gcc python3.11 heaptrack zstd)

missing=()
for package in "${wanted[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)" = "install ok installed" ] || missing+=("$package")
done

SUDO=()
if [ "$(id -u)" -ne 0 ]; then SUDO=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
fresh_lists() {
  [ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 -print -quit 2>/dev/null)" ]
}

if [ ${#missing[@]} -gt 0 ]; then
  fresh_lists || "${SUDO[@]}" apt-get update -q
  echo "system-packages: apt-get install ${missing[*]}"
  # a stale list (a 404 on download) needs one refresh and a retry
  "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || { "${SUDO[@]}" apt-get update -q && "${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"; }
else
  echo "system-packages: all installed (${#wanted[@]} packages)"
fi
command -v perf >/dev/null 2>&1 || "${SUDO[@]}" apt-get install -y -q --no-install-recommends linux-perf || true
