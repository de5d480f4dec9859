#!/usr/bin/env bash
# Install the R runtime of colbench's R worker (worker.R next to this script) from Debian/Ubuntu packages.
#
#   install.sh           install what is missing (idempotent; < 1 s when everything is present)
#   install.sh --check   only report; exit 0 when ready, 1 when something is missing
#   install.sh --packages  print the Debian packages it installs, one a line (CI installs them in one apt-get)
#
# Called by `colbench setup r` and by `.ci/run`. CRAN is not used: every R package comes from apt
# (`r-cran-*`), so versions are the distribution's (bookworm: R 4.2.2, data.table 1.14.8, readr 2.1.4,
# vroom 1.6.1, jsonlite 1.8.4, R.utils 2.12.2). Notes for bookworm:
#   - there is no `r-cran-arrow` package, so the arrow reader of E1 cannot run in R here (the Python worker
#     covers Arrow's CSV reader); worker.R does not offer an arrow reader, so it is not installed anywhere.
#   - `r-cran-bench` exists but is not needed: bench::hires_time() reads CLOCK_REALTIME on Linux, the same
#     clock as Sys.time(); the worker times with Sys.time() guarded by /proc/uptime (see worker.R).
set -euo pipefail

# r-cran-r.utils: data.table::fread() needs R.utils to read .gz files (it gunzips to a temp file first).
PACKAGES=(r-base-core r-cran-data.table r-cran-readr r-cran-vroom r-cran-jsonlite r-cran-r.utils)

check_only=0
case "${1:-}" in
  --check) check_only=1 ;;
  --packages) printf '%s\n' "${PACKAGES[@]}"; exit 0 ;;
  "") ;;
  *) echo "usage: $0 [--check | --packages]" >&2; exit 2 ;;
esac

is_installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

r_ready() {
  command -v Rscript >/dev/null 2>&1 &&
    Rscript --vanilla -e 'for (p in c("data.table", "readr", "vroom", "jsonlite", "R.utils"))
                            if (!requireNamespace(p, quietly = TRUE)) quit(status = 1)' >/dev/null 2>&1
}

missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${PACKAGES[@]}"; do is_installed "$p" || missing+=("$p"); done
fi

if [ ${#missing[@]} -eq 0 ] && r_ready; then
  echo "colbench R worker: ready ($(Rscript --version 2>&1 | head -n1))"
  exit 0
fi
if [ "$check_only" -eq 1 ]; then
  echo "colbench R worker: missing ${missing[*]:-R packages (Rscript cannot load data.table/readr/vroom/jsonlite/R.utils)}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "colbench R worker: no apt-get on this system; install R >= 4.1 with data.table, readr, vroom," \
       "jsonlite and R.utils yourself (install.packages(c('data.table','readr','vroom','jsonlite','R.utils')))" >&2
  exit 1
fi

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO=(sudo); else
    echo "colbench R worker: need root (or sudo) to apt-get install ${missing[*]}" >&2; exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive

has_candidate() {  # does apt know a candidate version of package $1?
  local c
  c="$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2; exit}')"
  [ -n "$c" ] && [ "$c" != "(none)" ]
}

# apt-get update only when the package lists do not know what we need (fresh container, stale lists).
need_update=0
for p in "${missing[@]}"; do has_candidate "$p" || need_update=1; done
if [ "$need_update" -eq 1 ]; then
  echo "colbench R worker: apt-get update" >&2
  "${SUDO[@]}" apt-get update -q
fi
for p in "${missing[@]}"; do
  if ! has_candidate "$p"; then
    echo "colbench R worker: apt has no package $p on this system" >&2
    exit 1
  fi
done
echo "colbench R worker: apt-get install ${missing[*]}" >&2
"${SUDO[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

if ! r_ready; then
  echo "colbench R worker: installed, but Rscript cannot load data.table/readr/vroom/jsonlite/R.utils" >&2
  exit 1
fi
echo "colbench R worker: ready ($(Rscript --version 2>&1 | head -n1))"
