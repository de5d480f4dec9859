"""`colbench explain A B` end to end: the real CLI, real workers re-run under real Valgrind, a known extra amount of
work on one side (COLBENCH_EXTRA_WORK, injected from outside the benchmark) found where it ran, the JSON's shares
adding up, the flame graph written inside COLBENCH_HOME, and bad input as one line with exit 2.

Valgrind runs are slow: one tiny placebo case a side (about 5 s a `run`, 5 s an `explain`)."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from colbench.app.explain import find_perf
from colbench.profiles.symbols import PYTHON_OBJECT, is_interpreter
from tests.conftest import REQUIRE_ALL


def needs_valgrind() -> None:
    missing = [tool for tool in ("valgrind", "cc") if shutil.which(tool) is None]
    if missing:
        if REQUIRE_ALL:
            pytest.fail(f"{', '.join(missing)} not on PATH (COLBENCH_REQUIRE_ALL=1)")
        pytest.skip(f"{', '.join(missing)} not on PATH: Valgrind and a C compiler are needed for profiles")


class Sandbox:
    """A COLBENCH_HOME, a working directory and a TMPDIR of its own: what lands outside the home can be seen."""

    def __init__(self, root: Path) -> None:
        self.home, self.cwd, self.tmp = root / "home", root / "cwd", root / "tmp"
        for folder in (self.cwd, self.tmp):
            folder.mkdir(parents=True)

    def __call__(self, *args: str, env: dict[str, str] | None = None, timeout: float = 300,
                 ) -> subprocess.CompletedProcess[str]:
        environment = {**os.environ, "COLBENCH_HOME": str(self.home), "TMPDIR": str(self.tmp), **(env or {})}
        environment.pop("COLBENCH_STORE", None)
        return subprocess.run([sys.executable, "-m", "colbench", *args], capture_output=True, text=True,
                              env=environment, cwd=self.cwd, timeout=timeout)

    def run_id(self) -> str:
        runs = json.loads(self("show", "--runs", "--format", "json").stdout)
        return runs[0]["run_id"]

    def outside_the_home(self) -> list[Path]:
        """Whatever is left in the working directory and in TMPDIR (colbench's temporary folders are removed)."""
        return sorted([*self.cwd.rglob("*"), *self.tmp.rglob("*")])


def one_line_error(proc: subprocess.CompletedProcess[str], *phrases: str) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("colbench: error:"), proc.stderr
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


def within(path: str | Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


# --- a known slowdown, explained ---------------------------------------------------------------------------------

EXTRA = 0.20


@pytest.fixture(scope="module")
def ab(tmp_path_factory) -> tuple[Sandbox, str]:
    """One placebo case in two environments of one run, the second with 20% more work in its timed call."""
    needs_valgrind()
    box = Sandbox(tmp_path_factory.mktemp("explain-ab"))
    ran = box("run", "placebo", "--param", "duration=0", "--param", "work=20000", "--measure", "instructions",
              "--processes", "1", "--iterations", "1", "--env", "a=@current",
              "--env", f"b=@current COLBENCH_EXTRA_WORK={EXTRA:.0%}", timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    return box, box.run_id()


@pytest.mark.slow
def test_explain_json_finds_the_injected_work_and_its_shares_add_up(ab):
    box, run_id = ab
    out = box("explain", f"{run_id}:a", f"{run_id}:b", "--format", "json", timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "colbench-explain/1"
    (case,) = doc["cases"]
    assert case["error"] is None and case["label"].startswith("placebo")
    for side in ("baseline", "contender"):
        profile = case["profiles"][side]
        assert profile["source"] == "re-run" and profile["error"] is None and within(profile["path"], box.home)
    # the worker says how much it added (sized on the first counted call), and the profiles see that much
    (warning,) = case["profiles"]["contender"]["warnings"]
    added = float(re.search(r"≈([\d.]+)% of the first", warning).group(1)) / 100
    assert added == pytest.approx(EXTRA, abs=0.01)
    change = case["total_change"] / case["baseline"]["total"]
    assert case["total_change"] > 0 and change == pytest.approx(added, abs=0.02), (change, added)
    assert case["ratio"] == pytest.approx(1 + change)
    assert case["contender"]["total"] - case["baseline"]["total"] == case["total_change"]
    # the listed functions account for most of it, and their shares add to what the JSON says they do
    functions = case["functions"]
    assert 1 <= len(functions) <= 15 and case["changed_functions"] >= len(functions)
    assert case["listed_share"] >= 0.8
    assert sum(f["share"] for f in functions) == pytest.approx(case["listed_share"], abs=1e-9)
    for f in functions:
        assert f["self"]["change"] == f["self"]["contender"] - f["self"]["baseline"]
        assert f["share"] == pytest.approx(f["self"]["change"] / case["total_change"], abs=1e-6)
    sizes = [abs(f["self"]["change"]) for f in functions]
    assert sizes == sorted(sizes, reverse=True)
    # the extra work is Python code (the placebo's busy loop): its cost is the interpreter's, or the Python
    # function's where the worker's Python names them
    grown = [f for f in functions if f["share"] >= 0.05]
    assert grown and all(is_interpreter(f["library"]) or f["library"] == PYTHON_OBJECT for f in grown), grown
    if sys.version_info < (3, 12):  # and the output says so (tests/app/test_explain_python_names.py: 3.12+)
        assert all(f["library"] != PYTHON_OBJECT and is_interpreter(f["library"]) for f in grown), grown
        assert any(note.startswith("Python functions are not named on a, b: before Python 3.12") for note in
                   case["notes"]), case["notes"]
    # the flame graph and the case's explain.json are written inside the home, beside each other
    svg = Path(case["flamegraph"])
    assert svg.is_file() and within(svg, box.home) and within(doc["folder"], box.home)
    root = ET.parse(svg).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert functions[0]["short"] in "".join(root.itertext())
    kept = json.loads((svg.parent / "explain.json").read_text())
    assert kept["case_id"] == case["case_id"] and kept["total_change"] == case["total_change"]
    assert box.outside_the_home() == []


@pytest.mark.slow
def test_explain_table_names_the_functions_and_the_flame_graph(ab):
    box, run_id = ab
    out = box("explain", f"{run_id}:a", f"{run_id}:b", "--top", "5", "--case", "placebo", timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "function" in text and "share" in text and "Δ inclusive" in text
    assert re.search(r"the 5 functions listed account for [\d.]+% of the change", text), text
    assert "explained 1 of 1 case in" in text
    graph = re.search(r"flame graph: (\S+flamegraph\.svg)", text.replace("\n", ""))
    assert graph and within(graph.group(1), box.home)
    assert "profiling placebo" in out.stderr and "Traceback" not in out.stderr
    assert box.outside_the_home() == []


@pytest.mark.slow
def test_the_dry_run_says_which_profiles_it_would_take_and_their_time_and_writes_nothing(ab):
    box, run_id = ab
    profiles = box.home / "profiles"
    before = sorted(p for p in profiles.rglob("*")) if profiles.exists() else []
    out = box("explain", f"{run_id}:a", f"{run_id}:b", "--dry-run", timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"placebo .*: profile \S+, \S+ again under callgrind \([\d.]+ s idle, from its counting "
                     r"processes\)", out.stdout), out.stdout
    assert re.search(r"estimated time: [\d.]+ s for 2 fresh profiles of 1 case", out.stdout), out.stdout
    after = sorted(p for p in profiles.rglob("*")) if profiles.exists() else []
    assert after == before  # nothing profiled, nothing written


# --- bad input: one line, exit 2 ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def failing(tmp_path_factory) -> tuple[Sandbox, str]:
    """Wall time only (no Valgrind needed to make it): two placebo cases, one raising; side b carries an option
    Valgrind refuses (VALGRIND_OPTS is read by Valgrind only: the run itself does not mind)."""
    box = Sandbox(tmp_path_factory.mktemp("explain-failing"))
    box("run", "placebo", "--param", "duration=0", "--param", "error=none,exception", "--processes", "1",
        "--iterations", "1", "--warmup", "0", "--env", "a=@current",
        "--env", "b=@current VALGRIND_OPTS=--no-such-valgrind-option", timeout=600)
    return box, box.run_id()


@pytest.mark.slow
def test_bad_input_is_one_line_and_exit_2(failing):
    box, run_id = failing
    one_line_error(box("explain", "nosuchrun:a", f"{run_id}:b"), "nosuchrun")
    one_line_error(box("explain", f"{run_id}:a", f"{run_id}:nosuchenv"), "nosuchenv")
    one_line_error(box("explain", f"{run_id}:a", f"{run_id}:b", "--top", "0"), "--top")
    one_line_error(box("explain", f"{run_id}:a", f"{run_id}:b", "--profiler", "gprof"), "callgrind or perf")
    one_line_error(box("explain", f"{run_id}:a", f"{run_id}:b", "--format", "yaml"), "--format")
    one_line_error(box("explain", f"{run_id}:a", f"{run_id}:b", "--case", "nosuchcase"), "nosuchcase")
    # the case that raised has no successful result on either side: it is never profiled, naming it is an error
    one_line_error(box("explain", f"{run_id}:a", f"{run_id}:b", "--case", "placebo duration=0.0 error=exception"),
                   "no case of both sides")
    assert box.outside_the_home() == []


@pytest.mark.slow
def test_perf_is_refused_in_one_line_where_it_cannot_sample(failing):
    box, run_id = failing
    bin_dir = str(Path(sys.executable).parent)
    if shutil.which("perf", path=bin_dir):
        pytest.skip("perf sits beside this interpreter: cannot hide it")
    hidden = box("explain", f"{run_id}:a", f"{run_id}:b", "--profiler", "perf", env={"PATH": bin_dir})
    one_line_error(hidden, "perf is not installed", "apt-get install linux-perf", "callgrind")


@pytest.fixture(scope="module")
def sampled(tmp_path_factory) -> tuple[Sandbox, str]:
    """Wall time: one placebo case of ~20 ms a call, side b with 50% more work in its timed call."""
    perf, why = find_perf()
    if perf is None:  # never required: whether perf may sample is the kernel's setting, not the install's
        pytest.skip(why)
    box = Sandbox(tmp_path_factory.mktemp("explain-perf"))
    ran = box("run", "placebo", "--param", "duration=0.02", "--processes", "1", "--iterations", "3",
              "--env", "a=@current", "--env", "b=@current COLBENCH_EXTRA_WORK=50%", timeout=600)
    assert ran.returncode in (0, 1), ran.stdout + ran.stderr
    return box, box.run_id()


@pytest.mark.slow
@pytest.mark.serial  # perf samples time, and the extra work is sized on a measured time: alone (tests/xdist_plan.py)
def test_perf_samples_real_time_of_many_calls_and_says_what_is_noise(sampled):
    box, run_id = sampled
    out = box("explain", f"{run_id}:a", f"{run_id}:b", "--profiler", "perf", "--format", "json", timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    (case,) = json.loads(out.stdout)["cases"]
    assert case["error"] is None and case["unit"] == "ns" and "perf" in case["metric"]
    for side in ("baseline", "contender"):
        profile = case["profiles"][side]
        assert profile["path"].endswith("profile.perf.gz") and within(profile["path"], box.home)
        (sampled_note,) = [w for w in profile["warnings"] if w.startswith("perf sampled")]
        calls = int(re.search(r"sampled (\d+) timed call", sampled_note).group(1))
        assert 30 <= calls <= 200  # ~1.5 s of CPU time at ~20 ms a call
    # 50% more work, far beyond the sampling noise, and each row carries its own noise. The extra work is sized
    # on the first warm-up's wall time, which a busy machine stretches: more than +50% of CPU time then, never less
    change = case["total_change"] / case["baseline"]["total"]
    assert change > 0.25, change
    assert case["total_noise"] > 0 and case["total_change"] > 3 * case["total_noise"]
    assert all(f["noise"] is not None for f in case["functions"])
    assert case["listed_share"] >= 0.8
    # the busy loop is Python code: perf sees the interpreter's C functions run it
    assert is_interpreter(case["functions"][0]["library"]), case["functions"][0]
    root = ET.parse(case["flamegraph"]).getroot()
    assert "/perf/" in case["flamegraph"] and root.tag.endswith("svg")
    assert box.outside_the_home() == []


@pytest.mark.slow
def test_a_side_that_fails_under_the_profiler_is_an_error_row_not_a_traceback(failing):
    needs_valgrind()
    box, run_id = failing
    out = box("explain", f"{run_id}:a", f"{run_id}:b", "--format", "json", timeout=600)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stdout + out.stderr
    (case,) = json.loads(out.stdout)["cases"]  # only the case that succeeded on both sides
    assert "error=none" in case["label"]
    assert case["profiles"]["baseline"]["error"] is None and within(case["profiles"]["baseline"]["path"], box.home)
    assert case["profiles"]["contender"]["error"] and case["profiles"]["contender"]["path"] is None
    assert case["error"].startswith("b: ") and "functions" not in case and case["flamegraph"] is None
    table = box("explain", f"{run_id}:a", f"{run_id}:b", timeout=600)
    assert table.returncode == 2 and "error: b: " in table.stdout and "explained 0 of 1 case in" in table.stdout
    assert box.outside_the_home() == []


# --- stored profiles: a damaged one is that case's error, the others go on ----------------------------------------


@pytest.mark.slow
def test_a_damaged_stored_profile_is_one_cases_error_and_the_other_case_is_explained(tmp_path):
    needs_valgrind()
    box = Sandbox(tmp_path)
    ran = box("run", "placebo", "--param", "duration=0", "--param", "work=2000,4000", "--measure", "instructions",
              "--processes", "1", "--iterations", "1", "--env", "a=@current",
              "--env", "b=@current COLBENCH_EXTRA_WORK=20%", "--profile", timeout=600)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    run_id = box.run_id()
    kept = sorted(box.home.glob(f"profiles/*/runs/{run_id}/b/*/profile.callgrind.gz"))
    assert len(kept) == 2
    damaged = kept[0]
    whole = damaged.read_bytes()
    assert gzip.decompress(whole).startswith(b"# callgrind format")
    damaged.write_bytes(whole[: len(whole) // 2])  # cut short, as a full disk or a killed copy would leave it
    out = box("explain", f"{run_id}:a", f"{run_id}:b", "--format", "json", timeout=600)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stdout + out.stderr
    cases = {c["case_id"]: c for c in json.loads(out.stdout)["cases"]}
    assert len(cases) == 2
    bad, good = cases[damaged.parent.name], next(c for cid, c in cases.items() if cid != damaged.parent.name)
    assert bad["error"].startswith("cannot read a profile") and "gzip" in bad["error"]
    assert good["error"] is None and good["total_change"] > 0 and good["listed_share"] >= 0.8
    assert {side["source"] for side in good["profiles"].values()} == {"stored"}
    assert box.outside_the_home() == []
