#!/usr/bin/env bash
# Install Debian's PostgreSQL server binaries for the store tests (tests/store), which start their own throwaway
# server in a temporary directory on a free local port. Idempotent: does nothing when initdb is already there.
# The package's own cluster is not used; Debian's policy may start it on port 5432, which the tests do not need.
set -euo pipefail

if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  echo "postgres.sh: PostgreSQL is installed ($(ls /usr/lib/postgresql | sort -V | tail -n 1))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "postgres.sh: need root or sudo to install postgresql" >&2; exit 1; }
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists only when they are missing or older than a day.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mtime -1 -print -quit 2>/dev/null)" ]; then
  $SUDO apt-get update -q
fi
$SUDO apt-get install -y -q --no-install-recommends postgresql

compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null \
  || { echo "postgres.sh: postgresql installed but no initdb under /usr/lib/postgresql" >&2; exit 1; }
echo "postgres.sh: installed PostgreSQL $(ls /usr/lib/postgresql | sort -V | tail -n 1)"
