# ruff: noqa: E501  (a table of published figures reads best one entry per line)
"""Published figures of E1 — arrowbench CSV readers (R, 2021), keyed the way our results are. Seconds unless named otherwise."""

from __future__ import annotations

# E1 (8 cores, to data.frame)
E1_SECONDS = {
    ("nyctaxi_2010-01", "pyarrow"): 6.8, ("nyctaxi_2010-01", "data.table"): 23.7, ("nyctaxi_2010-01", "vroom"): 48.4,
    ("fanniemae_2016Q4", "pyarrow"): 14.0, ("fanniemae_2016Q4", "data.table"): 9.8,
}
