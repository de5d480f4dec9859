"""How counts, ratios and percentages read."""

import math

from colbench.words import percent_text, plural, ratio_text


def test_ratios_beyond_what_an_interval_can_mean_read_as_bounds():
    assert ratio_text(1.0234) == "1.023"
    assert ratio_text(0.0012) == "0.001"
    assert ratio_text(0.0) == "<0.001" and ratio_text(1.7e-8) == "<0.001"
    assert ratio_text(175862068.733) == ">1000" and ratio_text(math.inf) == ">1000"
    assert ratio_text(math.nan) == "-"


def test_percentages_beyond_a_thousand_read_as_a_bound():
    assert percent_text(0.034) == "3.4%"
    assert percent_text(132132535.872) == ">1000%"
    assert percent_text(math.inf) == "-" and percent_text(math.nan) == "-"


def test_plural():
    assert plural(1, "process") == "1 process" and plural(2, "process") == "2 processes"
