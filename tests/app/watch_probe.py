"""`watchprobe`, a tiny library whose releases the watch tests build as real wheels (offline, byte for byte the same
each time), and a user-written benchmark, `watchprobe-crc`, that times its `work()`.

`work(rounds)` runs zlib's CRC-32 over 64 KiB `rounds` times: native code whose instruction count repeats exactly.
A release built with `extra` bytes also runs zlib's Adler-32 over that many bytes per call, so it costs a few
percent more instructions, all of them in one native function (`adler32_z` in libz) that `explain` can name. A
release of kind "raises" fails every call; "corrupt" is not a zip and cannot install; "hangs" never finishes its
import (and starts a child that hangs too); "segfaults" crashes on import; "slow" sleeps 5 ms a call (a
regression no noise hides, in wall time).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.app.probe import STAMP, _record_hash

NAME = "watchprobe"
BENCHMARK = "watchprobe-crc"

MODULE = '''"""watchprobe {version}: CRC-32 over 64 KiB, `rounds` times (and Adler-32 over EXTRA bytes)."""
import zlib
{on_import}

__version__ = "{version}"
EXTRA = {extra}
_DATA = bytes(range(256)) * 256


def work(rounds):
    {body}
    total = 0
    for _ in range(int(rounds)):
        total = zlib.crc32(_DATA, total)
    if EXTRA:
        total ^= zlib.adler32(memoryview(_DATA)[:EXTRA])
    return total
'''

BENCH = '''from typing import Any, ClassVar

from colbench.model.benchmark import Benchmark, Context, OutputCheck, Work
from colbench.model.params import Grid, Param


class WatchProbe(Benchmark):
    name = "watchprobe-crc"
    description = "watchprobe.work(rounds): zlib CRC-32 rounds, a library whose releases differ on purpose"
    engine = "watchprobe"
    work_unit = "rows"
    grid: ClassVar[Grid] = Grid((Param("rounds", default=(8,), type=int),
                                 Param("threads", default=(1,), type=int)))

    def setup(self, ctx: Context) -> None:
        import watchprobe

        ctx.state["work"] = watchprobe.work

    def run(self, ctx: Context) -> Any:
        return ctx.state["work"](int(ctx.params["rounds"]))

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        return OutputCheck(rows=1, columns=1)

    def work(self, ctx: Context) -> Work:
        return Work(rows=1)
'''


#: what a release of a hostile kind does when it is imported (issue 48): "hangs" starts a child that hangs too (the
#: test then looks for HANG_MARK among the processes: the whole group must be gone), "segfaults" crashes
HANG_MARK = "watchprobe-hang-child"
ON_IMPORT = {
    "hangs": ("import subprocess, sys, time\n"
              f"subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)', '{HANG_MARK}'])\n"
              "time.sleep(3600)\n"),
    "segfaults": "import ctypes\nctypes.string_at(0)\n",
}


def build_wheel(directory: Path, version: str, extra: int = 0, kind: str = "ok") -> Path:
    """watchprobe-VERSION-py3-none-any.whl in `directory`, written whole or not at all (a server may list it the
    moment its name appears)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{NAME}-{version}-py3-none-any.whl"
    part = directory / f".{path.name}.part"
    if kind == "corrupt":
        part.write_bytes(b"this is not a zip file\n")
        return part.replace(path)
    body = {"raises": 'raise RuntimeError("watchprobe %s is broken on purpose" % __version__)',
            "slow": "import time; time.sleep(0.005)"}.get(kind, "pass")
    on_import = ON_IMPORT.get(kind, "")
    info = f"{NAME}-{version}.dist-info"
    files = {
        f"{NAME}/__init__.py": MODULE.format(version=version, extra=extra, body=body, on_import=on_import).encode(),
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: colbench-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name, STAMP), data)
    return part.replace(path)


def install_benchmark(site: Path) -> Path:
    """The `watchprobe-crc` benchmark as an installed third-party distribution on `site` (put it on PYTHONPATH)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "watchprobe_bench.py").write_text(BENCH)
    info = site / "watchprobe_bench-0.1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: watchprobe-bench\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[colbench.benchmarks]\n{BENCHMARK} = watchprobe_bench:WatchProbe\n")
    return site
