"""The worker's lookup of one asv benchmark (benchmarks/asv_lookup.py): asv_runner's own benchmark object, as its
`get_benchmark_from_name` makes it, with only the kind's benchmark type imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).parent / "asv_project" / "benchmarks"

#: per case: its asv name and kind (as discovery says them)
CASES = [("bench_features.time_function", "time"), ("bench_features.TimeSuite.time_op", "time"),
         ("bench_features.TimeSuite.track_first", "track"), ("bench_features.Cached.time_len", "time"),
         ("bench_features.CamelCase.time_reverse", "time"), ("bench_features.timeraw_import", "timeraw"),
         ("bench_features.peakmem_alloc", "peakmemory"), ("bench_features.track_constant", "track")]

PROBE = """
import json, sys
from colbench.benchmarks.asv_lookup import find
root, whole, cases = sys.argv[1], sys.argv[2] == "1", json.loads(sys.argv[3])
if whole:
    from asv_runner.discovery import get_benchmark_from_name
out = []
for name, kind in cases:
    bench = get_benchmark_from_name(root, name) if whole else find(root, name, kind)
    out.append({"name": bench.name, "type": bench.type, "class": type(bench).__name__, "unit": bench.unit,
                "params": bench.params, "param_names": bench.param_names, "timeout": bench.timeout,
                "setup_cache_key": bench.setup_cache_key, "setups": len(bench._setups),
                "teardowns": len(bench._teardowns), "number": getattr(bench, "number", None)})
print(json.dumps({"found": out, "loaded": sorted(m for m in sys.modules if m.startswith("asv_runner") or m in
                                                 ("subprocess", "tempfile", "pympler", "importlib.metadata"))}))
"""


def _probe(cases: list[tuple[str, str]], whole: bool, root: Path = SUITE) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, str(root), "1" if whole else "0", json.dumps(cases)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_the_worker_makes_asv_runners_own_benchmark_importing_only_its_kind():
    assert _probe(CASES, whole=False)["found"] == _probe(CASES, whole=True)["found"]
    for cases, kind_module in (([c for c in CASES if c[1] != "timeraw"], None),
                               ([c for c in CASES if c[1] == "timeraw"], "asv_runner.benchmarks.timeraw")):
        loaded = _probe(cases, whole=False)["loaded"]
        # asv_runner's other benchmark types, its plugin scan and their heavy imports are left out
        assert "asv_runner.discovery" not in loaded and "asv_runner._aux" not in loaded, loaded
        assert "importlib.metadata" not in loaded and "pympler" not in loaded and "tempfile" not in loaded, loaded
        assert "asv_runner.benchmarks.mem" not in loaded, loaded
        assert ("subprocess" in loaded) == (kind_module is not None), loaded
        assert ("asv_runner.benchmarks.timeraw" in loaded) == (kind_module is not None), loaded


def test_a_name_it_cannot_resolve_goes_to_asv_runner_whole(tmp_path):
    suite = tmp_path / "benchmarks"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "bench_named.py").write_text(
        "def anything():\n    pass\n\n\nanything.benchmark_name = 'bench_named.time_renamed'\n")
    found = _probe([("bench_named.time_renamed", "time")], whole=False, root=suite)
    assert found["found"][0]["name"] == "bench_named.time_renamed" and found["found"][0]["class"] == "TimeBenchmark"
    assert "asv_runner.discovery" in found["loaded"]  # asv_runner's own search made it
    missing = subprocess.run([sys.executable, "-c", PROBE, str(suite), "0", '[["bench_named.time_absent", "time"]]'],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and "LookupError: asv benchmark bench_named.time_absent not found" in missing.stderr
