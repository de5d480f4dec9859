"""How often does `colbench compare` catch an injected slowdown? Repeated real trials with the placebo.

    uv run python scripts/detection_rate.py [--trials 10] [--slowdown 1.05] [--processes 12]

Each trial is one `colbench run placebo` with two interleaved environments, `base` and `slow` (the placebo's
duration scaled by --slowdown through COLBENCH_PLACEBO_FACTOR), then `colbench compare base slow`. Prints
each trial's verdict and interval, and the detection rate with a Wilson 95% interval.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path


def colbench(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "COLBENCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "colbench", *args], capture_output=True, text=True, env=env)


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--slowdown", type=float, default=1.05)
    parser.add_argument("--processes", type=int, default=12)
    parser.add_argument("--duration", type=float, default=0.01)
    args = parser.parse_args()
    verdicts = []
    for trial in range(args.trials):
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            run = colbench(home, "run", "placebo", "--param", f"duration={args.duration}", "--env", "base=@current",
                           "--env", f"slow=@current COLBENCH_PLACEBO_FACTOR={args.slowdown}", "--iterations", "5",
                           "--warmup", "1", "--processes", str(args.processes), "--seed", str(trial))
            if run.returncode != 0:
                sys.exit(run.stderr)
            out = colbench(home, "compare", "base", "slow", "--metric", "time", "--format", "json")
            (case,) = json.loads(out.stdout)["comparisons"]
            verdicts.append(case["verdict"])
            print(f"trial {trial + 1}: {case['verdict']:<12} ratio {case['ratio']:.4f} "
                  f"CI [{case['ci_low']:.4f}, {case['ci_high']:.4f}]  {case['reason']}", flush=True)
    hits = verdicts.count("regression")
    low, high = wilson(hits, len(verdicts))
    print(f"\n{args.slowdown - 1:+.0%} slowdown detected as regression in {hits}/{len(verdicts)} trials "
          f"({hits / len(verdicts):.0%}, 95% CI {low:.0%}–{high:.0%}); other verdicts: "
          + ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)) if v != "regression"))


if __name__ == "__main__":
    main()
