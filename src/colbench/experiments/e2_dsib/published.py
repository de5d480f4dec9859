"""Published figures of E2 — Data Science I/O baseline (2019),
keyed the way our results are. Seconds unless named otherwise."""

from __future__ import annotations

# E2: case → (Parquet s, CSV s)
E2_SECONDS = {
    ("read", "plain"): (1.08, 41.0), ("read", "str"): (3.68, 52.2), ("read", "cat"): (1.45, 44.1),
    ("continuous_read", "plain"): (7.1, 255.0),
    ("write", "plain"): (5.66, 184.0), ("write", "str"): (10.1, 199.0), ("write", "cat"): (6.56, 192.0),
}


E2_LABELS = {("read", "plain"): "1a", ("read", "str"): "1b", ("read", "cat"): "1c", ("continuous_read", "plain"): "2",
             ("write", "plain"): "3a", ("write", "str"): "3b", ("write", "cat"): "3c"}
