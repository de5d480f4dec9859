"""`colbench report` on real runs: the files it writes, what index.html holds (and never fetches), Markdown,
compare and history sections, one-line errors for bad input."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest

from colbench.report.html import write_report
from colbench.report.templating import environment
from colbench.report.terminal import ErrorView
from tests.report.conftest import report_cli
from tests.report.helpers import assert_png, assert_svg, derived_history, store_of

REMOTE = re.compile(r"""(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?//|url\(\s*["']?\s*(?:https?:)?//|@import""",
                    re.IGNORECASE)

# a broken plot fails the test
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("error:plot .* failed:RuntimeWarning")]


def assert_self_contained(html: str) -> None:
    assert not REMOTE.search(html), REMOTE.search(html).group(0)
    assert "http://" not in html and "https://" not in html
    assert "<script" not in html.lower()
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">', html)
    assert csp and unescape(csp.group(1)).startswith("default-src 'none';")  # the browser refuses any fetch


def test_html_report_of_real_runs(placebo_home, tmp_path):
    out = tmp_path / "report"
    proc = report_cli(placebo_home, "p2", "--output", str(out))
    assert "index.html" in proc.stdout
    html = (out / "index.html").read_text()
    assert_self_contained(html)
    assert len(re.findall(r'<img src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"', html)) >= 3  # plot + 2 histories
    assert_png((out / "placebo-time.png").read_bytes())
    assert_svg((out / "placebo-time.svg").read_text())
    assert 'href="placebo-time.svg"' in html
    # metadata: machine, versions, environment checks (warnings marked)
    for text in ("Environment checks", "cpu model", "versions seen in the results", "colbench", "Machine and versions"):
        assert text in html, text
    assert 'class="ok"' in html or 'class="warning"' in html
    # the tables, the errors with their traceback, the history of the three runs
    assert "every case (processes pooled)" in html and "duration=0.002" in html
    assert "Errors" in html and "RuntimeError: placebo raised on purpose" in html and "traceback" in html
    assert "History on this machine" in html and "3 runs on" in html


def test_compare_sections_from_environments_and_from_a_baseline(placebo_home, tmp_path):
    db = store_of(placebo_home)
    runs = {r.name: r.run_id for r in db.list_runs()}
    written = write_report(db, [runs["ab"]], tmp_path / "ab")
    html = written[0].read_text()
    assert "environment slow vs base" in html and "8 blocks" in html  # interleaved: paired by block
    assert re.search(r"<td class=\"(bad|good|same|warn)\">(regression|improvement|no change|inconclusive)</td>", html)
    assert_self_contained(html)
    proc = report_cli(placebo_home, "p2", "--compare", "p0", "--output", str(tmp_path / "vs"), "--no-history")
    html = (tmp_path / "vs" / "index.html").read_text()
    assert "p2 (" in html and "vs p0 (" in html and "History on this machine" not in html
    assert html.count("<tr>") > 4 and "2/2" in html  # processes per side
    assert proc.returncode == 0


def test_several_runs_get_a_section_and_a_plot_folder_each(placebo_home, tmp_path):
    report_cli(placebo_home, "p0", "p1", "--output", str(tmp_path))
    html = (tmp_path / "index.html").read_text()
    db = store_of(placebo_home)
    ids = [r.run_id for r in db.list_runs() if r.name in ("p0", "p1")]
    for run_id in ids:
        assert f'id="run-{run_id}-summary"' in html
        assert_png((tmp_path / run_id / "placebo-time.png").read_bytes())
    assert "Compare runs" in html  # p1 against p0: the same cases


def test_markdown_summary(placebo_home, tmp_path):
    proc = report_cli(placebo_home, "p2", "--format", "markdown", "--output", "-")
    text = proc.stdout
    assert text.startswith("## colbench run ")
    assert "| benchmark | case |" in text and "### Errors" in text and "placebo raised on purpose" in text
    assert "### History on this machine" in text
    assert "data:image" not in text and "<img" not in text
    report_cli(placebo_home, "ab", "--format", "markdown", "--output", str(tmp_path))
    written = (tmp_path / "report.md").read_text()
    assert "### environment slow vs base" in written and "| case | baseline | contender |" in written
    assert list(tmp_path.iterdir()) == [tmp_path / "report.md"]


def test_bad_input_is_one_line_and_exit_2(placebo_home, tmp_path):
    for args in (["no-such-run", "--output", str(tmp_path)], ["--format", "pdf", "--output", str(tmp_path)],
                 ["--output", "-"]):
        proc = report_cli(placebo_home, *args, check=False)
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("colbench: error:"), proc.stderr


def test_store_text_is_escaped():
    error = ErrorView(label="placebo <b>case</b>", env="default", kind="exception",
                      message="<script>alert(1)</script> & more", processes=[0],
                      traceback='File "<stdin>", line 1', stderr_tail="<img src=x onerror=alert(1)>")
    html = environment().get_template("macros.html").module.errors([error])
    assert "<script>" not in html and "<img" not in html and "<b>case" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; more" in html and "&lt;stdin&gt;" in html


def test_change_points_are_marked(placebo_home, tmp_path):
    """A history of 12 runs made of real placebo records, 25% slower from the 7th on."""
    store_path = tmp_path / "history.duckdb"
    derived_history(placebo_home, store_path)
    from colbench.store import open_store

    db = open_store(str(store_path), create=False)
    latest = db.list_runs()[0].run_id
    html = write_report(db, [latest], tmp_path / "html")[0].read_text()
    assert re.search(r"change \+2[3-7]\.\d% at run 7", html), "the step is marked where it happened"
    write_report(db, [latest], tmp_path / "md", fmt="markdown")
    text = (tmp_path / "md" / "report.md").read_text()
    assert re.search(r"12 runs, last .*; \+2[3-7]\.\d% at run 7 \(01c0ffee00\)", text), text


def test_report_output_must_be_a_directory(placebo_home, tmp_path):
    target = tmp_path / "file.txt"
    target.write_text("x")
    proc = report_cli(placebo_home, "p0", "--output", str(target), check=False)
    assert proc.returncode == 2 and "not a directory" in proc.stderr
    assert Path(target).read_text() == "x"
