"""Verdicts from real worker processes: the placebo run A/A, 6% slower and 1% slower, compared by the CLI."""

from __future__ import annotations

import json

import pytest

from tests.conftest import colbench


def compare_json(home, *args):
    proc = colbench("compare", *args, "--metric", "time", "--format", "json", home=home)
    assert proc.returncode in (0, 1, 3), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def aa_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("aa")
    durations = ",".join(f"{0.005 + i * 0.0005:.4f}" for i in range(20))
    colbench("run", "placebo", "--param", f"duration={durations}", "--env", "A=@current", "--env", "B=@current",
             "--iterations", "3", "--warmup", "0", "--processes", "12", home=home, check=True, timeout=600)
    return home


def test_a_vs_a_over_20_cases_finds_no_regression(aa_home):
    code, report = compare_json(aa_home, "A", "B")
    verdicts = [c["verdict"] for c in report["comparisons"]]
    assert len(verdicts) == 20
    assert code == 0
    assert "regression" not in verdicts and "improvement" not in verdicts
    # the comparison is not vacuous: with 12 paired blocks most cases are decided as "no change"
    assert verdicts.count("no change") >= 10, verdicts


def test_markdown_is_ready_for_a_pull_request(aa_home):
    proc = colbench("compare", "A", "B", "--metric", "time", "--format", "markdown", home=aa_home, check=True)
    assert "| case |" in proc.stdout and "no change" in proc.stdout


@pytest.fixture(scope="module")
def slow_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("slow")
    colbench("run", "placebo", "--param", "duration=0.01", "--env", "base=@current",
             "--env", "slow6=@current COLBENCH_PLACEBO_FACTOR=1.06",
             "--env", "slow1=@current COLBENCH_PLACEBO_FACTOR=1.01",
             "--iterations", "7", "--warmup", "1", "--processes", "16", home=home, check=True, timeout=600)
    return home


def test_six_percent_slower_is_a_regression_and_exits_1(slow_home):
    code, report = compare_json(slow_home, "base", "slow6")
    (case,) = report["comparisons"]
    assert case["verdict"] == "regression", case
    assert 1.04 < case["ratio"] < 1.08 and case["ci_low"] > 1.03
    assert code == 1


def test_one_percent_slower_is_no_change_not_a_regression(slow_home):
    code, report = compare_json(slow_home, "base", "slow1")
    (case,) = report["comparisons"]
    assert case["verdict"] == "no change", case
    assert code == 0


def test_bad_sides_are_usage_errors(slow_home):
    proc = colbench("compare", "base", "nosuchenv", home=slow_home)
    assert proc.returncode == 2 and "neither a run nor an environment" in proc.stderr
    proc = colbench("compare", "base", "base", home=slow_home)
    assert proc.returncode == 2


def test_until_decided_adds_blocks_only_while_inconclusive(tmp_path):
    home = tmp_path / "home"
    proc = colbench("run", "placebo", "--param", "duration=0.01,0.02", "--env", "base=@current",
                    "--env", "slow=@current COLBENCH_PLACEBO_FACTOR=1.10", "--iterations", "5", "--warmup", "1",
                    "--processes", "4", "--until-decided", "--max-looks", "4", home=home, check=True, timeout=600)
    assert "adding 4 blocks" in proc.stdout  # 4 blocks per side can never decide at this alpha
    _, report = compare_json(home, "base", "slow")
    for case in report["comparisons"]:
        assert case["verdict"] in ("regression", "inconclusive"), case  # never the wrong way
        # more blocks were added, up to the budget of 4 looks × 4 blocks; an undecided case used all of it
        assert 8 <= case["n_blocks"] <= 16
        assert case["verdict"] == "regression" or case["n_blocks"] == 16
