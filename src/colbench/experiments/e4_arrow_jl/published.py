"""Published figures of E4 — Arrow.jl vs CSV.jl (2020),
keyed the way our results are. Seconds unless named otherwise."""

from __future__ import annotations

# E4 (warm unless named)
E4_SECONDS = {"write_arrow": 2.2, "write_csv": 15.0, "read_mmap": 0.0003, "read_stream": 0.32, "read_copy": 0.52,
              "read_csv": 3.3}


E4_FIRST_RUN_SECONDS = {"read_csv": 7.4}
