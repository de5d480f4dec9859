"""The memory profile's Arrow pool (workers/python/heap_window.py `see_arrow_pool`): a pool colbench's preloaded shim
sees is traced as it is; one it cannot see is swapped for the system pool, which heaptrack sees directly, and the
worker says so. Real processes: the shim compiled and preloaded into a Python that imports the installed pyarrow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require_tools

pytestmark = pytest.mark.slow

PROBE = """
import json, pyarrow as pa
from colbench.workers.python.heap_window import see_arrow_pool
before = pa.default_memory_pool().backend_name
switched = see_arrow_pool(pa)
print(json.dumps({"before": before, "switched": switched, "after": pa.default_memory_pool().backend_name}))
"""


def probe(pool: str | None, shim: Path | None) -> dict[str, str | None]:
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ARROW_DEFAULT_MEMORY_POOL")}
    if pool:
        env["ARROW_DEFAULT_MEMORY_POOL"] = pool
    if shim:
        env["LD_PRELOAD"] = str(shim)
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120,
                          check=True)
    found: dict[str, str | None] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_a_pool_the_shim_sees_is_kept_and_one_it_cannot_see_becomes_the_system_pool(tmp_path: Path):
    require_tools("cc")
    from colbench.runner.memory_profile import build_shim

    shim = build_shim(tmp_path)
    # the installed pyarrow (26) calls mimalloc and jemalloc through symbols the shim takes over: both kept
    assert probe(None, shim) == {"before": "mimalloc", "switched": None, "after": "mimalloc"}
    assert probe("jemalloc", shim) == {"before": "jemalloc", "switched": None, "after": "jemalloc"}
    # the system pool needs no shim: heaptrack sees posix_memalign
    assert probe("system", None) == {"before": "system", "switched": None, "after": "system"}
    # without the shim the default pool's blocks are not seen (as a pyarrow 18-24's hidden mimalloc): swapped
    assert probe(None, None) == {"before": "mimalloc", "switched": "system", "after": "system"}
