#!/usr/bin/env bash
# Build the Java worker's fat jar in this folder against one Arrow Java version; print the jar's path.
#   build.sh              # the Arrow Java version of pom.xml
#   build.sh 18.1.0       # another version (Maven fetches it from Maven Central on first use)
#
# `colbench setup java [--arrow VERSION]` and `--env NAME=java:arrow==VERSION` run this script on a copy of
# these sources under $COLBENCH_HOME/workers/java/ (the installed package may be read-only) and keep one jar
# per Arrow Java version there; that cached jar is the one colbench runs.
# Needs java (17+) and mvn on PATH.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jar="$here/target/colbench-worker.jar"

for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "build.sh: $tool not found on PATH (install a JDK 17+ and Maven 3.8+)" >&2
    exit 1
  fi
done

version_flag=()
if [[ -n "${1:-}" ]]; then
  if [[ ! "$1" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "build.sh: Arrow Java version must look like 18.1.0, not '$1'" >&2
    exit 2
  fi
  version_flag=("-Darrow.version=$1")
fi

# -q keeps Maven quiet; its errors still reach stderr. The -D property also fills the version recorded in
# colbench-worker.properties (resource filtering), so results name the Arrow Java they ran with.
(cd "$here" && mvn -q -B -Dstyle.color=never "${version_flag[@]}" package -DskipTests) >&2
echo "$jar"
