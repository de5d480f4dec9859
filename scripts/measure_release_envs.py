"""How long the environments of a release sweep take: built cold (an empty environment cache; uv's own cache as it
is), then asked for again warm (every environment cached: what a later sweep, bisect or watch of those releases
pays), one line per release and the totals. docs/history.md quotes its output.

    uv run python scripts/measure_release_envs.py                       # the 16 releases of docs/history.md
    uv run python scripts/measure_release_envs.py --versions pyarrow==16.1.0,21.0.0

Builds under a new COLBENCH_HOME (a temporary directory unless --home is given), so the user's cache is untouched.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

SIXTEEN = ("pyarrow==0.17.1,1.0.1,2.0.0,3.0.0,4.0.1,5.0.0,6.0.1,7.0.0,8.0.0,9.0.0,10.0.1,12.0.1,14.0.2,16.1.0,"
           "21.0.0,26.0.1")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", default=SIXTEEN, help="a --versions spec (default: 16 pyarrow releases)")
    parser.add_argument("--home", type=Path, help="COLBENCH_HOME to build in (default: a new temporary one)")
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="colbench-envs-"))
    os.environ["COLBENCH_HOME"] = str(home)

    from colbench.runner.sweep import parse_versions, plan_sweep
    from colbench.runtimes.points import PointEnvironments

    sweep = plan_sweep(parse_versions(args.versions))
    print(f"{len(sweep.points)} releases of {sweep.package} into {home} (uv's cache as it is)")
    rounds: dict[str, list[float]] = {}
    for name in ("cold", "warm"):
        builder = PointEnvironments()  # a new search, sweep or watch: only the disk cache carries over
        seconds = []
        for point in sweep.points:
            started = time.monotonic()
            env = builder.get(point)
            took = time.monotonic() - started
            seconds.append(took)
            what = (f"Python {env.interpreter}, {env.spec}" if env is not None else builder.failed[point.label])
            print(f"{name} {point.label:>8}: {took:6.1f} s  {what}")
        rounds[name] = seconds
        print(f"{name}: {sum(seconds):.1f} s for {len(seconds)} environments (median {statistics.median(seconds):.1f}"
              f" s, most {max(seconds):.1f} s)")
    print(f"warm / cold: {sum(rounds['warm']) / sum(rounds['cold']):.2f} (a warm environment is resolved again by uv, "
          "not built)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
