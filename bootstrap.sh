#!/usr/bin/env bash
# Runs a command in colbench's environment on a machine that has only Python 3.11+ and git:
# installs uv when it is missing, syncs the locked dependencies, then runs the command with `uv run`.
#   ./bootstrap.sh colbench run quick
#   ./bootstrap.sh pytest
set -euo pipefail
cd "$(dirname "$0")"

find_uv() {
  if command -v uv >/dev/null 2>&1; then command -v uv; return; fi
  for candidate in "$HOME/.local/bin/uv" ".tools/uv/bin/uv"; do
    if [ -x "$candidate" ]; then echo "$candidate"; return; fi
  done
  # installed as a package of this Python, but its script directory is not on PATH: ask it where its binary is
  python3 -c "import uv; print(uv.find_uv_bin())" 2>/dev/null && return
  return 1
}

if ! UV=$(find_uv); then
  echo "bootstrap: uv not found (PATH, ~/.local/bin, .tools/uv), installing it from PyPI with pip" >&2
  python3 -m pip install --quiet --user uv 2>/dev/null \
    || python3 -m pip install --quiet --user --break-system-packages uv 2>/dev/null \
    || { python3 -m venv .tools/uv && .tools/uv/bin/pip install --quiet uv; }
  UV=$(find_uv) || { echo "bootstrap: could not install uv; see https://docs.astral.sh/uv/" >&2; exit 1; }
  echo "bootstrap: installed $("$UV" --version) at $UV" >&2
fi

# colbench's --env feature (and its tests) call uv themselves: make the uv found here the one they find, on PATH
# and in $UV (which `uv run` sets as well), even when it was just installed into a directory PATH lacks
UV=$(cd "$(dirname "$UV")" && pwd)/$(basename "$UV")
export UV PATH="$(dirname "$UV"):$PATH"
# --inexact: install the locked set, but keep what the user added beside it (a benchmark plugin installed with
# `uv pip install -e ./my-plugin`, as docs/writing-benchmarks.md shows); a plain sync removes every package the lock
# does not list. `uv run` syncs inexactly too.
# --compile-bytecode: the environment's modules compiled once, at install, as pip does. Without it each Python
# process compiles what it imports again wherever PYTHONDONTWRITEBYTECODE is set (scipy, pandas, matplotlib: about
# 2 s of CPU for every `colbench` command and worker the tests start)
# Say what the silent part is doing: a first sync installs every locked package and compiles it (about a minute on
# the 2-core reference VM with uv's cache warm; with an empty cache uv downloads them first). An environment already
# in sync (`--check`, a few milliseconds) is used without a word, so the command's own output comes first.
if ! "$UV" sync --frozen --all-extras --inexact --check --quiet 2>/dev/null; then
  packages=$(grep -c '^\[\[package\]\]' uv.lock || true)
  echo "bootstrap: installing colbench's environment into .venv with $UV ($packages locked packages, compiled once;" \
       "about a minute from uv's cache, longer when it downloads them first)" >&2
  started=$SECONDS
  "$UV" sync --frozen --all-extras --inexact --compile-bytecode --quiet
  echo "bootstrap: environment ready in $((SECONDS - started)) s" >&2
fi
exec "$UV" run --frozen --all-extras "$@"
