import json

import numpy as np

from colbench.analysis.verdicts import CaseInput, compare_suite
from colbench.report.compare_text import (
    MARKERS,
    TABLE_COLUMNS,
    format_value,
    json_report,
    markdown_report,
    summary_line,
    table_rows,
)
from tests.analysis.simulate import processes


def _results():
    rng = np.random.default_rng(40)
    cases = {
        ("csv-read", "reader=pyarrow"): CaseInput(processes(rng, 20), processes(rng, 20, ratio=1.2)),
        ("csv-read", "reader=pandas|c"): CaseInput(processes(rng, 20), processes(rng, 20)),
        ("parquet-write", "size"): CaseInput([[2.0e6]] * 3, [[1.8e6]] * 3, metric="file_size"),
        ("feather-read", "tiny"): CaseInput(processes(rng, 1), processes(rng, 1)),
    }
    return compare_suite(cases)


def test_table_rows_have_every_column():
    rows = table_rows(_results())
    assert len(rows) == 4 and all(len(r) == len(TABLE_COLUMNS) for r in rows)
    assert rows[0][0] == "csv-read reader=pyarrow"
    assert rows[0][8] == "regression"
    assert rows[2][2] == "1.9 MiB"
    assert rows[3][5] == "[-, -]"
    # the smallest slowdown each comparison could have caught, at 80% and 95% power
    mde80, mde95 = (float(x.rstrip("%")) for x in rows[1][7].split(" / "))
    assert 3.0 <= mde80 < mde95 < 20
    assert rows[3][7] == "- / -"  # never a verdict (nor an MDE) from one process a side
    assert rows[2][7] == "-"  # deterministic: any change beyond the threshold shows


def test_markdown_report_for_a_pull_request():
    md = markdown_report(_results(), baseline_label="main", contender_label="pr-123")
    assert md.startswith("### colbench compare: `main` vs `pr-123`")
    assert "1 regression, 1 improvement, 1 no change, 1 inconclusive of 4 comparisons; threshold +/-3%" in md
    assert "| case | metric | main | pr-123 | ratio [CI] | MDE 80/95% | verdict |" in md
    assert f"**{MARKERS['regression']}**" in md
    assert "reader=pandas\\|c" in md  # pipes escaped
    assert "<details><summary>1 with no change</summary>" in md
    assert md.index("[!] regression") < md.index("[?] inconclusive") < md.index("[+] improvement")
    assert md.isascii()  # no emoji


def test_summary_json_and_units():
    results = _results()
    assert summary_line(results).startswith("1 regression, 1 improvement")
    doc = json.loads(json_report(results, baseline="main"))
    assert doc["baseline"] == "main"
    assert doc["summary"] == {"regression": 1, "improvement": 1, "no change": 1, "inconclusive": 1}
    tiny = doc["comparisons"][3]
    assert tiny["verdict"] == "inconclusive" and tiny["ci_high"] is None
    assert tiny["mde_80"] is None and tiny["mde_95"] is None
    same = doc["comparisons"][1]
    assert 0.03 <= same["mde_80"] < same["mde_95"] and same["basis"] == "wall" and same["sigma_log"] > 0
    assert format_value(0.000512) == "512.0 us"
    assert format_value(1.5) == "1.50 s"
    assert format_value(3e-9) == "3.0 ns"
    assert format_value(3 * 2**30, "memory") == "3.0 GiB"
    assert format_value(263.3e6, "instructions") == "263.3 M instr"
    assert format_value(512, "file_size") == "512 B"
    assert format_value(float("nan")) == "-"
    assert format_value(2.5, "rows") == "2.5"


def test_a_verdict_on_cpu_time_says_its_medians_are_cpu_time():
    """Beside a results table of wall time, a median of CPU time must not pass for a wall time."""
    import dataclasses

    wall = _results()[0]
    cpu = dataclasses.replace(wall, basis="cpu")
    (row,) = table_rows([cpu])
    assert row[1] == "time (CPU)" and row[2].endswith(" CPU") and row[3].endswith(" CPU")
    assert not table_rows([wall])[0][2].endswith("CPU")
    assert f"{table_rows([cpu])[0][2]} |" in markdown_report([cpu], baseline_label="a", contender_label="b")
