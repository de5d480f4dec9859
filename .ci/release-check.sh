#!/usr/bin/env bash
# Release check: build the wheel and sdist, install the wheel into a fresh environment (uv tool), and use it as a
# new user would, from a directory outside the checkout with its own COLBENCH_HOME:
#   colbench --version, doctor, setup r --check, setup java, run quick (R and Java cases included), show.
# Fails on any non-zero exit or any result that is not ok. A few minutes at most (the quick suite runs once per
# case, iterations cut to 1: this checks the install, not performance).
set -euo pipefail
cd "$(dirname "$0")/.."
checkout="$(pwd)"
export PATH="$HOME/.local/bin:$checkout/.tools/uv/bin:$PATH"   # where bootstrap.sh puts uv
command -v uv >/dev/null || ./bootstrap.sh true

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
say() { printf '\n-- %s (%s)\n' "$*" "$(date +%T)"; }

say "uv build (wheel + sdist)"
uv build --quiet --out-dir "$work/dist"
wheel="$(ls "$work"/dist/colbench-*.whl)"
sdist="$(ls "$work"/dist/colbench-*.tar.gz)"
ls -l "$work/dist"
python3 - "$wheel" "$sdist" <<'PY'
import sys, tarfile, zipfile
need = ["workers/r/worker.R", "workers/r/install.sh", "workers/java/pom.xml", "workers/java/build.sh",
        "workers/java/jvm.options", "workers/java/src/main/java/colbench/worker/Main.java", "model/result.schema.json"]
wheel = set(zipfile.ZipFile(sys.argv[1]).namelist())
sdist = {n.split("/", 1)[1] for n in tarfile.open(sys.argv[2]).getnames() if "/" in n}
missing = [f"wheel: {f}" for f in need if f"colbench/{f}" not in wheel]
missing += [f"sdist: {f}" for f in need if f"src/colbench/{f}" not in sdist]
if missing:
    sys.exit("release-check: missing from the distributions: " + ", ".join(missing))
print(f"wheel and sdist carry the workers ({len(wheel)} / {len(sdist)} files)")
PY

say "uv tool install the wheel into a fresh tool directory"
export UV_TOOL_DIR="$work/tools" UV_TOOL_BIN_DIR="$work/bin"
uv tool install --quiet "$wheel"
colbench="$work/bin/colbench"

mkdir "$work/elsewhere"
cd "$work/elsewhere"
unset VIRTUAL_ENV PYTHONPATH COLBENCH_STORE COLBENCH_WORKERS_DIR COLBENCH_DATA
export COLBENCH_HOME="$work/home"
where="$("$work/tools/colbench/bin/python" -c 'import colbench; print(colbench.__file__)')"
case "$where" in
  "$checkout"*) echo "release-check: colbench was imported from the checkout ($where)" >&2; exit 1 ;;
esac
echo "colbench imported from $where"

say "colbench --version"; "$colbench" --version
say "colbench doctor"; "$colbench" doctor
say "colbench setup r --check"; "$colbench" setup r --check
say "colbench setup java"; "$colbench" setup java
say "colbench run quick"
"$colbench" run quick --iterations 1 --warmup 0 --processes 1 --run-name release-check
"$colbench" show release-check --format json > "$work/quick.json"
"$work/tools/colbench/bin/python" - "$work/quick.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
bad = [(r["benchmark"], r["error_message"]) for r in rows if r["status"] != "ok"]
if bad:
    sys.exit(f"release-check: {len(bad)} cases failed: {bad}")
runtimes = {r.get("runtime") for r in rows if r["benchmark"] == "ipc-bandwidth"}
readers = {r.get("reader") for r in rows if r["benchmark"] == "csv-read"}
if "java" not in runtimes or "data.table" not in readers:
    sys.exit(f"release-check: the quick suite ran no Java or no R case (runtimes {runtimes}, readers {readers})")
print(f"release-check: {len(rows)} cases ok, Java and R included")
PY
say "release check passed"
