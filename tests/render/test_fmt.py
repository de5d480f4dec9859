"""How numbers, names and cases read in every table and report (colbench.render): units that match their magnitude,
metric values in the registry's unit, Markdown and terminal text that cannot be turned into markup."""

from __future__ import annotations

import math

import pytest
from rich.console import Console

from colbench.analysis.aggregate import summarize_cases
from colbench.model.records import Result
from colbench.render.fmt import fmt_bytes, fmt_instructions, fmt_metric, fmt_rate, fmt_seconds, md_text, spread
from colbench.render.tables import cell, plain, row_for
from tests.records import make_result


@pytest.mark.parametrize("seconds, shown", [
    (None, "-"), (0, "0.0 µs"), (3e-9, "3.0 ns"), (5.12e-4, "512.0 µs"), (0.01234, "12.34 ms"), (1.5, "1.50 s"),
    (100, "100 s"), (4321.9, "4322 s"),
])
def test_seconds_take_the_unit_of_their_magnitude(seconds, shown):
    assert fmt_seconds(seconds) == shown


def test_ascii_seconds_for_markdown_that_must_survive_any_mail_client():
    assert fmt_seconds(5.12e-4, ascii_only=True) == "512.0 us"


@pytest.mark.parametrize("size, shown", [
    (None, "-"), (0, "0 B"), (1023, "1023 B"), (1024, "1.0 KiB"), (81_264_640, "77.5 MiB"), (3 << 40, "3.0 TiB"),
    (5 << 50, "5120.0 TiB"),
])
def test_bytes_are_binary_units(size, shown):
    assert fmt_bytes(size) == shown


def test_metric_values_read_in_the_registrys_unit():
    assert fmt_metric(0.25, "time") == "250.00 ms"
    assert fmt_metric(263_338_349, "instructions") == "263.3 M instr"
    assert fmt_metric(2 << 20, "memory") == "2.0 MiB"
    assert fmt_metric(97.59, "gbps") == "97.59 Gbps"
    assert fmt_metric(3.0, "no-such-metric") == "3"
    for missing in (None, math.nan, math.inf, -math.inf):
        assert fmt_metric(missing, "time") == "-"
    assert fmt_instructions(1_234_000_000) == "1.234 G" and fmt_instructions(12) == "12"
    assert fmt_rate(201.6e6) == "201.6 MB/s" and fmt_rate(None) == "-"


def test_markdown_text_is_inert():
    hostile = "run|<img src=x onerror=alert(1)>\n\x1b[31mred"
    shown = md_text(hostile)
    assert "<img" not in shown and "&lt;img" in shown
    assert "\\|" in shown and "\n" not in shown and "\x1b" not in shown


def test_a_terminal_cell_shows_markup_and_escapes_as_text():
    console = Console(width=200, record=True, color_system=None)
    console.print(plain("[red]run[/red] \x1b]0;title\x07"))
    shown = console.export_text()
    assert "[red]run[/red]" in shown and "\x1b" not in shown and "\x07" not in shown


def _result(case: str, threads: int, walls: list[float], status: str = "ok") -> Result:
    return make_result(case_id=case, benchmark="csv-read", env_name="default", process_index=0, status=status,
                       params={"reader": "pyarrow", "threads": threads}, samples={"wall_s": walls},
                       error=None if status == "ok" else {"kind": "timeout", "message": "took too long"},
                       inputs={"data": {"size_bytes": 81_264_640}}, work={"bytes": 81_264_640})


def test_a_case_cell_is_its_median_and_spread_and_an_error_says_its_kind():
    summaries = summarize_cases([_result("a", 1, [0.30, 0.40, 0.50]), _result("b", 2, [0.2, 0.2, 0.2]),
                                 _result("c", 4, [], status="error")])
    one, two, failed = summaries
    assert cell(one) == f"400.00 ms {spread(one)}" and spread(one).startswith("±")
    assert one.input_size_bytes == 81_264_640 and one.bytes_per_s == pytest.approx(81_264_640 / 0.4)
    assert cell(failed) == "[red]timeout[/red]" and cell(None) == "-"
    assert row_for(summaries, reader="pyarrow") is failed  # the most threads, as the posts reported
    assert row_for([one, two], reader="pyarrow") is two


def test_a_counted_case_without_times_is_one_dash_not_a_time_and_a_spread_of_nothing():
    (counted,) = summarize_cases([make_result(case_id="d", benchmark="csv-read", env_name="default",
                                              process_index=0, params={"reader": "pyarrow", "threads": 1},
                                              samples={"instructions": [1.0e6, 1.1e6]})])
    assert cell(counted) == "-"


@pytest.mark.parametrize(("seconds", "shown"), [(4.24, "4.2 s"), (42, "42 s"), (200, "3 min 20 s"),
                                                (725, "12 min 05 s"), (3599, "59 min 59 s"), (3900, "1 h 05 min")])
def test_an_elapsed_time_keeps_its_seconds_past_ten_minutes(seconds, shown):
    from colbench.render.fmt import fmt_duration

    assert fmt_duration(seconds) == shown
