"""Error bars read a stored summary's statistics, whatever number type holds them."""

from __future__ import annotations

import numpy as np

from colbench.render.figures import error_bar, quartiles


def test_quartiles_from_stored_quartiles_or_from_the_iqr():
    assert quartiles({"median": 2.0, "q1": 1.5, "q3": 3}) == (1.5, 2.0, 3.0)
    assert quartiles({"median": np.float64(2.0), "iqr": np.int64(1)}) == (1.5, 2.0, 2.5)
    assert quartiles({"median": 0.2, "iqr": 1.0}) == (0.0, 0.2, 0.7)  # never below zero
    assert quartiles({"median": 1.0, "q1": None, "q3": 2.0}) == (1.0, 1.0, 1.0)


def test_no_median_no_quartiles_and_no_error_bar():
    assert quartiles(None) is None and quartiles({}) is None and quartiles({"median": None, "q1": 1.0}) is None
    assert quartiles({"median": True}) is None  # a flag is not a statistic
    assert error_bar(None) == (0.0, 0.0)
    assert error_bar({"median": 4.0, "q1": 3.0, "q3": 6.0}, scale=2.0) == (0.5, 1.0)
