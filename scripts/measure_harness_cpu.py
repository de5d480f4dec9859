"""Measure how much CPU the orchestrator itself burns while a worker runs (issue 12: the harness must be quiet).

    uv run python scripts/measure_harness_cpu.py [--duration 10] [--repeat 3] [--memory-limit 4GiB] [--tty]

Starts the real `colbench run placebo --param duration=D` (1 process, 1 iteration) in a temporary home, finds
the worker when it appears, and reads the orchestrator's own user+sys CPU time from /proc/<pid>/stat (its
children are not counted there) at the worker's start and after the worker has gone. Prints that CPU time as a
share of one CPU over the worker's wall time. The goal is <= 0.5 %. With --tty colbench writes to a
pseudo-terminal, so its live progress view is drawn as for a user at a terminal. Linux only.
"""

from __future__ import annotations

import argparse
import os
import pty
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """user + sys of this process only (fields 14 and 15 of /proc/PID/stat, after the command name)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) * TICK_S


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def drain(fd: int) -> None:
    """Read a pseudo-terminal until it closes, so the program writing to it never blocks."""
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass


def one_window(duration: float, home: Path, memory_limit: str | None, tty: bool) -> tuple[float, float]:
    """(orchestrator CPU seconds, wall seconds) while one worker of a placebo run was alive."""
    env = {**os.environ, "COLBENCH_HOME": str(home)}
    env.pop("COLBENCH_STORE", None)
    command = [sys.executable, "-m", "colbench", "run", "placebo", "--param", f"duration={duration}",
               "--processes", "1", "--iterations", "1", "--warmup", "0", "--timeout", str(duration * 3 + 60)]
    if memory_limit:
        command += ["--memory-limit", memory_limit]
    output: int = subprocess.DEVNULL
    if tty:
        primary, output = pty.openpty()
        threading.Thread(target=drain, args=(primary,), daemon=True).start()
    orchestrator = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.PIPE, text=True)
    if tty:
        os.close(output)
    try:
        worker = None
        while worker is None:
            if orchestrator.poll() is not None:
                raise SystemExit(f"colbench run ended before a worker started:\n{orchestrator.stderr.read()}")
            found = children(orchestrator.pid)
            worker = found[0] if found else None
            time.sleep(0.002)
        cpu0, wall0 = cpu_seconds(orchestrator.pid), time.perf_counter()
        while worker in children(orchestrator.pid):
            time.sleep(0.05)
        cpu1, wall1 = cpu_seconds(orchestrator.pid), time.perf_counter()
    finally:
        _, stderr = orchestrator.communicate(timeout=120)
    if orchestrator.returncode != 0:
        raise SystemExit(f"colbench run failed ({orchestrator.returncode}):\n{stderr}")
    return cpu1 - cpu0, wall1 - wall0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of placebo busy work")
    parser.add_argument("--repeat", type=int, default=3, help="runs to measure")
    parser.add_argument("--memory-limit", default=None, help="pass --memory-limit to colbench run")
    parser.add_argument("--tty", action="store_true", help="give colbench a pseudo-terminal (live view drawn)")
    args = parser.parse_args()
    print(f"load: {Path('/proc/loadavg').read_text().split()[:3]} on {os.cpu_count()} CPUs; "
          f"clock tick {TICK_S * 1e3:.0f} ms; output to {'a pseudo-terminal' if args.tty else '/dev/null'}")
    shares = []
    for index in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="colbench-harness-cpu-") as tmp:
            cpu, wall = one_window(args.duration, Path(tmp), args.memory_limit, args.tty)
        shares.append(cpu / wall)
        print(f"  run {index + 1}: orchestrator CPU {cpu * 1e3:.0f} ms over {wall:.2f} s of worker "
              f"= {cpu / wall:.2%} of one CPU")
    shares.sort()
    print(f"orchestrator CPU share while a worker runs: median {shares[len(shares) // 2]:.2%} "
          f"(min {shares[0]:.2%}, max {shares[-1]:.2%}, n={len(shares)}); goal <= 0.50%")


if __name__ == "__main__":
    main()
