#!/usr/bin/env bash
# Build the Java worker's fat jar when it is missing or older than its sources; print the jar's path.
#   workers/java/build.sh            # build if needed
#   FORCE=1 workers/java/build.sh    # always rebuild
# Needs java (17+) and mvn on PATH; Maven fetches Arrow Java from Maven Central on the first build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jar="$here/target/colbench-worker.jar"

for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "workers/java/build.sh: $tool not found on PATH (install a JDK 17+ and Maven 3.8+)" >&2
    exit 1
  fi
done

stale=1
if [[ -f "$jar" && "${FORCE:-0}" != "1" ]]; then
  if [[ -z "$(find "$here/pom.xml" "$here/src" -newer "$jar" -print -quit)" ]]; then
    stale=0
  fi
fi

if [[ "$stale" == "1" ]]; then
  # -q keeps Maven quiet; its errors still reach stderr
  (cd "$here" && mvn -q -B -Dstyle.color=never package -DskipTests) >&2
  touch "$jar"
fi

echo "$jar"
