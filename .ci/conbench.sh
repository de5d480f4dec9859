#!/usr/bin/env bash
# The publish tests (tests/store/test_conbench.py) run a real Conbench server: the newest release on PyPI with its
# dependencies of that day (tests/store/conbench_server.py), which need Python 3.11. Install that Python from
# Debian when it is missing, then the server's environment into the tests' cache, so that a broken install shows
# here, before the tests. Idempotent: a second call finds the cached environment.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v python3.11 >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "conbench.sh: need root or sudo to install python3.11" >&2; exit 1; }
    SUDO="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends python3.11
fi
./bootstrap.sh python -m tests.store.conbench_server install
