"""`colbench explain A B --metric memory` end to end: the real CLI, real workers re-run under real heaptrack, a
`sitecustomize` on one side that keeps an extra copy of a Parquet read's table alive until the read returns,
found where it was made, for pyarrow's default pool (mimalloc: invisible to malloc interposers, reported by
colbench's pool shim) and for `allocator=system`; the traced peaks against the peak RSS the run recorded; and bad
input as one line with exit 2.

One run of a 100k-row Parquet read, 2 processes a side, both allocators (about 40 s), and one `explain` (two
fresh heaptrack workers a case, about 30 s)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.app.test_explain import Sandbox, one_line_error, within
from tests.conftest import require_tools
from tests.report.conftest import entry, free_port, http_get

ROWS = 100_000
CASE = ["file-read", "--param", "format=parquet", "--param", "codec=snappy", "--param", "engine=pyarrow",
        "--param", "source=fanniemae_2016Q4", "--param", "output=arrow_table", "--param", f"rows={ROWS}",
        "--threads", "1"]

SITECUSTOMIZE = textwrap.dedent('''\
    """Planted by tests/app/test_explain_memory.py: every read_table keeps a copy of its table until it returns."""
    import pyarrow as _pa
    import pyarrow.parquet as _pq

    _read_table = _pq.read_table


    def keep_a_copy(table):
        half = table.num_rows // 2  # two chunks, so combine_chunks copies every column
        return _pa.concat_tables([table.slice(0, half), table.slice(half)]).combine_chunks()


    def read_table(*args, **kwargs):
        table = _read_table(*args, **kwargs)
        copy = keep_a_copy(table)  # alive until this call returns
        del copy
        return table


    _pq.read_table = read_table
''')

#: the function that allocates the copy's buffers (Table.combine_chunks → Concatenate → ConcatenateBuffers)
COPY_FUNCTION = "arrow::ConcatenateBuffers"


def needs_heaptrack() -> None:
    require_tools("heaptrack", "cc", "zstd")


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[Sandbox, str, dict]:
    needs_heaptrack()
    root = tmp_path_factory.mktemp("explain-memory")
    box = Sandbox(root)
    plant = root / "plant"
    plant.mkdir()
    (plant / "sitecustomize.py").write_text(SITECUSTOMIZE)
    ran = box("run", *CASE, "--param", "allocator=default,system", "--processes", "2", "--env", "base=@current",
              "--env", f"copy=@current PYTHONPATH={plant}", timeout=900)
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    run_id = box.run_id()
    out = box("explain", f"{run_id}:base", f"{run_id}:copy", "--metric", "memory", "--format", "json",
              timeout=900)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    return box, run_id, json.loads(out.stdout)


def allocator_of(case: dict) -> str:
    return "system" if "allocator=system" in case["label"] else "default"


@pytest.mark.slow
def test_the_function_that_made_the_copy_is_rank_1_for_both_pools(planted):
    box, _, doc = planted
    cases = {allocator_of(c): c for c in doc["cases"]}
    assert set(cases) == {"default", "system"}
    for allocator, case in cases.items():
        assert case["error"] is None, (allocator, case["error"])
        assert case["unit"] == "B" and case["metric"].startswith("memory")
        top = case["functions"][0]
        assert top["function"].startswith(COPY_FUNCTION) and top["library"] == "libarrow.so", (allocator, top)
        assert top["self"]["baseline"] == 0 and top["self"]["change"] > 0
        assert case["listed_share"] >= 0.8, (allocator, case["listed_share"])
        # shares are of the peak's change and add up to what the listed functions account for
        shares = sum(f["share"] for f in case["functions"])
        assert abs(shares - case["listed_share"]) < 1e-9
        change = case["total_change"]
        assert change == case["contender"]["total"] - case["baseline"]["total"] > 0
        # the peak grew by about the copy: the bytes the concatenation functions allocated
        copied = sum(f["self"]["change"] for f in case["functions"] if "Concatenate" in f["function"])
        assert 0.85 * copied <= change <= 1.05 * copied, (allocator, change, copied)
        memory = case["memory"]
        churn = memory["churn_bytes"]
        assert churn["contender"] - churn["baseline"] >= 0.9 * copied  # the copy is allocated once more
        measured = memory["measured"]
        assert measured["baseline"]["pool"] == ("system" if allocator == "system" else "mimalloc")
        # Arrow's pool saw the same peak as the trace's pool allocations: the shim reports every pool block
        for side in ("baseline", "contender"):
            pool_peak = measured[side]["pool_peak_bytes"]
            assert 0.9 * pool_peak <= case[side]["total"] <= 1.2 * pool_peak, (allocator, side)


@pytest.mark.slow
def test_the_traced_peaks_agree_with_the_recorded_peak_rss(planted):
    """docs/explain.md, "The traced peak and the recorded peak RSS": the peak RSS holds the whole process
    (interpreter, libraries, imports: ~190 MB here), the traced peak only the timed call's live allocations; what
    lies outside the traced peak is the same on both sides within 10% of the peak RSS, so the contender's peak RSS
    is the baseline's plus the traced change, within 10%."""
    _, _, doc = planted
    for case in doc["cases"]:
        rss = case["memory"]["recorded_peak_rss_bytes"]
        a, b = rss["baseline"], rss["contender"]
        assert a and b
        outside_a, outside_b = a - case["baseline"]["total"], b - case["contender"]["total"]
        assert abs(outside_b - outside_a) <= 0.10 * max(a, b), (case["label"], a, b, case["total_change"])
        predicted = a + case["total_change"]
        assert abs(predicted - b) <= 0.10 * b
        # and the traced peak is what the call allocated, far below the process's RSS
        assert case["baseline"]["total"] < 0.5 * a


@pytest.mark.slow
def test_the_table_and_the_memory_flame_graph(planted):
    box, run_id, doc = planted
    case = doc["cases"][0]
    svg = Path(case["flamegraph"])
    assert within(svg, box.home) and svg.parent.name == "memory"
    root = ET.parse(svg).getroot()
    titles = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert any("ConcatenateBuffers" in t for t in titles)
    assert any("Where the memory went" in (t.text or "") for t in root.iter("{http://www.w3.org/2000/svg}text"))
    stored = json.loads((svg.parent / "explain.json").read_text())
    assert stored["memory"]["churn_bytes"] == case["memory"]["churn_bytes"]
    # the table, from the profiles just taken (kept in the explain folder, not re-run: --rerun is not given, but
    # nothing was stored by the run, so they are taken anew; the table must say the same)
    table = box("explain", f"{run_id}:base", f"{run_id}:copy", "--metric", "memory", "--case", case["case_id"],
                timeout=600)
    assert table.returncode == 0, table.stdout + table.stderr
    text = table.stdout
    assert "ConcatenateBuffers" in text and "at peak A" in text and "churn" in text
    assert "of the peak's change" in text and "peak RSS recorded by the runs" in text
    assert box.outside_the_home() == []


@pytest.mark.slow
def test_the_report_and_the_dashboard_show_who_owns_the_peak_beside_the_memory_verdict(planted):
    """The HTML report adds a memory comparison where memory profiles exist, with the flame graph `explain` drew;
    the dashboard compares on memory with the same."""
    box, run_id, _ = planted
    report = box("report", run_id, "--output", str(box.home / "report"), "--no-history", timeout=600)
    assert report.returncode == 0, report.stdout + report.stderr
    html = (box.home / "report" / "index.html").read_text()
    assert "environment copy vs base — memory" in html and "Where the memory went" in html
    assert html.count("<figure class=\"flame\">") == 2  # both pools, beside the memory verdicts
    assert "Δ at the peak" in html and "ConcatenateBuffers" in html and "Peak of the timed call" in html
    port = free_port()
    env = {**os.environ, "COLBENCH_HOME": str(box.home)}
    env.pop("COLBENCH_STORE", None)
    with subprocess.Popen([*entry("serve"), "--port", str(port)], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL) as server:
        try:
            base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 90
            while True:
                with contextlib.suppress(OSError):
                    if http_get(base + "/")[0] == 200:
                        break
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.3)
            query = urlencode({"baseline": run_id, "baseline_env": "base", "contender": run_id,
                               "contender_env": "copy", "metric": "memory"})
            status, _, page = http_get(f"{base}/compare?{query}")
        finally:
            server.terminate()
            server.wait(timeout=15)
    assert status == 200 and "Where the memory went" in page and "Δ at the peak" in page, page[:500]
    assert "<script" not in page


# --- run --profile-memory, and bad input: one line each ----------------------------------------------------------


@pytest.fixture(scope="module")
def placebo(tmp_path_factory) -> tuple[Sandbox, str]:
    """Two environments of a tiny Parquet read, with the memory profiles `run --profile-memory` keeps."""
    needs_heaptrack()
    box = Sandbox(tmp_path_factory.mktemp("explain-memory-bad"))
    tiny = [*CASE[:-4], "--param", "rows=2000", "--threads", "1"]
    ran = box("run", *tiny, "--processes", "1", "--iterations", "1", "--env", "a=@current", "--env", "b=@current",
              "--profile-memory", timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return box, box.run_id()


@pytest.mark.slow
def test_run_keeps_memory_profiles_that_explain_uses_and_a_damaged_one_is_that_cases_error(placebo):
    box, run_id = placebo
    kept = sorted(box.home.glob(f"profiles/*/runs/{run_id}/*/*/memory/profile.heaptrack.*"))
    assert [p.parent.parent.parent.name for p in kept] == ["a", "b"]
    assert all((p.parent / "memory.json").is_file() for p in kept)
    first = box("explain", f"{run_id}:a", f"{run_id}:b", "--metric", "memory", "--format", "json", timeout=600)
    assert first.returncode == 0, first.stdout + first.stderr
    case = json.loads(first.stdout)["cases"][0]
    assert case["error"] is None and case["baseline"]["total"] > 0
    assert {p["source"] for p in case["profiles"].values()} == {"stored"}
    assert case["profiles"]["contender"]["path"] == str(kept[1])
    whole = kept[1].read_bytes()
    kept[1].write_bytes(whole[: len(whole) // 2])  # cut short, as a full disk or a killed copy would leave it
    again = box("explain", f"{run_id}:a", f"{run_id}:b", "--metric", "memory", "--format", "json", timeout=600)
    assert again.returncode == 2 and "Traceback" not in again.stderr, again.stdout + again.stderr
    bad = json.loads(again.stdout)["cases"][0]
    assert bad["error"].startswith("cannot read a memory profile") and "--rerun" in bad["error"]
    table = box("explain", f"{run_id}:a", f"{run_id}:b", "--metric", "memory")
    assert table.returncode == 2 and "error: cannot read a memory profile" in table.stdout
    assert table.stdout.count("error:") == 1
    rerun = box("explain", f"{run_id}:a", f"{run_id}:b", "--metric", "memory", "--rerun", "--format", "json",
                timeout=600)
    assert rerun.returncode == 0 and json.loads(rerun.stdout)["cases"][0]["error"] is None
    assert box.outside_the_home() == []


@pytest.mark.slow
def test_a_missing_tracer_is_one_line_with_its_install_command(placebo, tmp_path):
    box, run_id = placebo
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("cc", "gcc", "zstd"):
        if shutil.which(tool):
            (bare / tool).symlink_to(shutil.which(tool))
    out = box("explain", f"{run_id}:a", f"{run_id}:b", "--metric", "memory", "--rerun", env={"PATH": str(bare)})
    one_line_error(out, "heaptrack", "apt-get install heaptrack")
    run = box("run", "placebo", "--param", "duration=0", "--processes", "1", "--profile-memory",
              env={"PATH": str(bare)})
    one_line_error(run, "--profile-memory", "apt-get install heaptrack")
    wrong = box("explain", f"{run_id}:a", f"{run_id}:b", "--metric", "cycles")
    one_line_error(wrong, "--metric 'cycles'", "instructions or memory")
    perf = box("explain", f"{run_id}:a", f"{run_id}:b", "--metric", "memory", "--profiler", "perf")
    one_line_error(perf, "--profiler perf")


@pytest.mark.slow
def test_a_case_that_cannot_be_traced_is_an_error_row(tmp_path):
    """The R worker has no heaptrack window: its case is an error row that says so, in one line."""
    needs_heaptrack()
    require_tools("Rscript")
    box = Sandbox(tmp_path)
    ran = box("run", "csv-read", "--param", "reader=data.table", "--param", "rows=1000", "--threads", "1",
              "--processes", "1", "--iterations", "1", "--env", "a=@current", "--env", "b=@current", timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    run_id = box.run_id()
    out = box("explain", f"{run_id}:a", f"{run_id}:b", "--metric", "memory", "--format", "json", timeout=600)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stdout + out.stderr
    cases = json.loads(out.stdout)["cases"]
    assert cases and all("Python workers only" in c["error"] and c["flamegraph"] is None for c in cases)
    table = box("explain", f"{run_id}:a", f"{run_id}:b", "--metric", "memory", timeout=600)
    assert table.returncode == 2 and f"explained 0 of {len(cases)} case" in table.stdout
    words = " ".join(table.stdout.split())  # the console wraps long lines
    assert words.count("error:") == len(cases) and words.count("a: memory profiles are taken in Python workers only") \
        == len(cases)
