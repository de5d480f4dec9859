"""Published figures of E3 — Arrow Java in-memory read bandwidth (2018),
keyed the way our results are. Seconds unless named otherwise."""

from __future__ import annotations

# E3: binary 1 KiB values, one thread: (access, batch_rows) → Gbps; the holder API read offsets only
E3_GBPS = {("materialize", 100_000): 9.72, ("offsets", 100_000): 16.50, ("offsets", 10_000): 28.82,
           ("offsets", 1_000): 11.19}


E3_CORE_SCALING_GBPS = {1: 28.8, 2: 52.1, 4: 75.9, 8: 91.8, 16: 168.8}
