"""Reports and dashboard pages of instruction counts (`--measure instructions` records), with `--metric`."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from colbench.report.html import write_report
from colbench.store import open_store
from colbench.store.base import ResultQuery
from tests.report.conftest import http_get, report_cli, serve_in_thread
from tests.report.helpers import derived_history

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier


def test_instruction_counts_in_reports_and_pages(placebo_home, tmp_path):
    """12 runs of counts made of real placebo records, 25% more instructions from the 7th run on."""
    store_path = tmp_path / "counts.duckdb"
    derived_history(placebo_home, store_path, series="instructions")
    db = open_store(str(store_path), create=False)
    latest = db.list_runs()[0].run_id
    html = write_report(db, [latest], tmp_path / "html")[0].read_text()  # the metric the runs measured
    assert re.search(r"— instructions:\s*12 runs", html) and re.search(r"change \+2[3-7]\.\d% at run 7", html)
    write_report(db, [latest], tmp_path / "md", fmt="markdown", baseline_id="20260101T000000-hist00")
    text = (tmp_path / "md" / "report.md").read_text()
    assert re.search(r"— instructions: 12 runs, last [\d.]+ [kMG]? ?instr", text), text
    assert re.search(r"\| [\d.]+ [kMG]? ?instr \| [\d.]+ [kMG]? ?instr \|", text), "compare rows show counts"
    assert " ms |" not in text

    case = db.results(ResultQuery(run_ids=(latest,)))[0].case_id
    with serve_in_thread(str(store_path)) as base:
        status, _, body = http_get(base + "/history?" + urlencode({"benchmark": "placebo", "case": case,
                                                                      "metric": "instructions"}))
        assert status == 200 and " instr" in body and "(instructions)" in body
        status, _, body = http_get(base + "/history?" + urlencode({"benchmark": "placebo", "case": case}))
        assert status == 404, "these runs measured no time"
        query = {"baseline": "20260101T000000-hist00", "contender": latest, "metric": "instructions"}
        status, _, body = http_get(base + "/compare?" + urlencode(query))
        assert status == 200 and " instr" in body and re.search(r">1\.2[3-7]\d<", body), "the 25% step, in counts"
        status, _, _ = http_get(base + "/compare?" + urlencode({**query, "metric": "cycles"}))
        assert status == 400


def test_report_metric_option_is_checked(placebo_home):
    proc = report_cli(placebo_home, "p0", "--output", "-", "--format", "markdown", "--metric", "cycles",
                      check=False)
    assert proc.returncode == 2 and "choose time or instructions" in proc.stderr
