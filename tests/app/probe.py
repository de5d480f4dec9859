"""A tiny library, `bisectprobe`, whose releases the tests build as real wheels (offline, byte for byte the same each
time), and a third-party benchmark, `probe-work`, that times its `work()`: the speed of a release is written into it.

Each release is the same module with a different `FACTOR` (how long `work(seconds)` spins, times `seconds`), or
a release that is broken on purpose: `raises` (the case fails in it) or `corrupt` (not a zip: it cannot install).
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

NAME = "bisectprobe"
BENCHMARK = "probe-work"
#: a fixed time stamp for every file in a wheel, so a wheel's bytes (and its environment's key) never change
STAMP = (2024, 1, 1, 0, 0, 0)

MODULE = '''"""bisectprobe {version}: spins for FACTOR times the seconds asked (busy, not sleeping)."""
import time

__version__ = "{version}"
FACTOR = {factor}


def work(seconds):
    {body}
    deadline = time.perf_counter() + seconds * FACTOR
    count = 0
    while time.perf_counter() < deadline:
        count += 1
    return count
'''

BENCH = '''from typing import Any, ClassVar

from colbench.model.benchmark import Benchmark, Context, OutputCheck, Work
from colbench.model.params import Grid, Param


class ProbeWork(Benchmark):
    name = "probe-work"
    description = "bisectprobe.work(duration): a library whose releases differ in speed on purpose"
    engine = "bisectprobe"
    work_unit = "rows"
    grid: ClassVar[Grid] = Grid((Param("duration", default=(0.02,), type=float),
                                 Param("threads", default=(1,), type=int)))

    def setup(self, ctx: Context) -> None:
        import bisectprobe

        ctx.state["work"] = bisectprobe.work

    def run(self, ctx: Context) -> Any:
        return ctx.state["work"](float(ctx.params["duration"]))

    def after_each(self, ctx: Context, output: Any) -> OutputCheck:
        return OutputCheck(rows=1, columns=1)

    def work(self, ctx: Context) -> Work:
        return Work(rows=1)
'''


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_wheel(directory: Path, version: str, factor: float = 1.0, kind: str = "ok") -> Path:
    """bisectprobe-VERSION-py3-none-any.whl in `directory`; kind "raises" fails every call, "corrupt" is no zip."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{NAME}-{version}-py3-none-any.whl"
    if kind == "corrupt":
        path.write_bytes(b"this is not a zip file\n")
        return path
    body = 'raise RuntimeError("bisectprobe %s is broken on purpose" % __version__)' if kind == "raises" else "pass"
    return write_wheel(path, NAME, version,
                       {f"{NAME}/__init__.py": MODULE.format(version=version, factor=factor, body=body).encode()})


def write_wheel(path: Path, name: str, version: str, files: dict[str, bytes]) -> Path:
    """A pure-Python wheel at `path` holding `files` (archive name → bytes) and the metadata pip and uv need."""
    info = f"{name}-{version}.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: colbench-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{member},{_record_hash(data)},{len(data)}\n" for member, data in files.items())
    files[f"{info}/RECORD"] = (record + f"{info}/RECORD,,\n").encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in files.items():
            archive.writestr(zipfile.ZipInfo(member, STAMP), data)
    return path


def install_benchmark(site: Path, module: str = "bisectprobe_bench", source: str = BENCH,
                      entry: str = f"{BENCHMARK} = bisectprobe_bench:ProbeWork") -> Path:
    """A third-party benchmark (`probe-work` unless told) as an installed distribution on `site` (put it on
    PYTHONPATH): `source` as `module`, found through its `colbench.benchmarks` entry point `entry`."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source)
    info = site / f"{module}-0.1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[colbench.benchmarks]\n{entry}\n")
    return site
