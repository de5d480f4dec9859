"""Settings the worker must apply and confirm: Arrow's allocator, thread pools, the page-cache state."""

from __future__ import annotations

import json

import pytest

from tests.conftest import colbench

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier

SMALL = ["--param", "engine=pyarrow", "--param", "format=feather", "--param", "codec=lz4", "--param",
         "output=arrow_table", "--param", "source=fanniemae_2016Q4", "--param", "rows=5000",
         "--processes", "1", "--iterations", "2", "--warmup", "0"]


def results(home):
    out = home / "r.jsonl"
    colbench("export", "--format", "jsonl", "--output", str(out), home=home, check=True)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_allocator_threads_and_cold_cache_are_applied_and_confirmed(tmp_path):
    home = tmp_path / "home"
    colbench("run", "file-read", *SMALL, "--param", "allocator=system,jemalloc,mimalloc", "--threads", "1,2",
             "--cache", "warm,cold", home=home, check=True)
    docs = results(home)
    assert len(docs) == 12 and all(d["status"] == "ok" for d in docs), [d["error"] for d in docs]
    for d in docs:
        assert d["allocator"]["actual"] == d["params"]["allocator"]
        assert d["memory"]["engine_memory"] == f"arrow_pool:{d['params']['allocator']}"
        assert d["threads"]["applied"]["arrow_cpu"] == d["params"]["threads"]
        assert d["cache"]["requested"] == d["params"]["cache"]
        if d["params"]["cache"] == "cold":
            assert d["cache"]["achieved"] == "cold" or d["cache"]["achieved"].startswith("partly-cold")
        else:
            assert d["cache"]["achieved"] == "warm"
        assert d["inputs"]["data"]["rows"] == 5000 and d["output"]["rows"] == 5000
        assert d["versions"]["pyarrow"]
