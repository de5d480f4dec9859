#!/usr/bin/env bash
# Installs Debian's chromium for the headless browser tests (tests/report/). Idempotent: does nothing when
# /usr/bin/chromium already works. Never downloads a browser from anywhere but the Debian archive.
set -euo pipefail

if [ -x /usr/bin/chromium ] && /usr/bin/chromium --version >/dev/null 2>&1; then
  /usr/bin/chromium --version
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
install() {
  $SUDO apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
}
# Package lists that are missing or stale (a 404 on download) need one `apt-get update`, then a retry.
if ! apt-cache show chromium >/dev/null 2>&1 || ! install; then
  $SUDO apt-get update -q
  install
fi
/usr/bin/chromium --version
