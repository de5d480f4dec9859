"""The claims of E1 (arrowbench's R CSV readers, 2021), as the post published them (8 cores, to data.frame)."""

from __future__ import annotations

from colbench.benchmarks.common import FANNIE, TAXI_2010
from colbench.model.claims import Claim, ClaimCase, Untestable


def _read(reader: str, source: str, output: str = "dataframe") -> ClaimCase:
    return ClaimCase("csv-read", {"reader": reader, "source": source, "output": output, "compression": "none",
                                  "inference": "default", "allocator": "default", "cache": "warm"})


CLAIMS = (
    Claim("e1-taxi-arrow-vs-fread", "e1", "taxi → data frame: Arrow's CSV reader beats data.table's fread",
          _read("pyarrow", TAXI_2010), _read("data.table", TAXI_2010), published=23.7 / 6.8,
          source="6.8 s vs 23.7 s: \"arrow is about three times faster than data.table and vroom\""),
    Claim("e1-taxi-arrow-vs-vroom", "e1", "taxi → data frame: Arrow's CSV reader beats vroom (altrep = FALSE)",
          _read("pyarrow", TAXI_2010), _read("vroom", TAXI_2010), published=48.4 / 6.8, source="6.8 s vs 48.4 s"),
    Claim("e1-taxi-fread-vs-vroom", "e1", "taxi → data frame: fread beats vroom (altrep = FALSE)",
          _read("data.table", TAXI_2010), _read("vroom", TAXI_2010), published=48.4 / 23.7,
          source="23.7 s vs 48.4 s"),
    Claim("e1-fannie-fread-vs-arrow", "e1", "Fannie Mae → data frame: fread is ahead of Arrow's CSV reader",
          _read("data.table", FANNIE), _read("pyarrow", FANNIE), published=14.0 / 9.8, source="9.8 s vs 14.0 s"),
    Claim("e1-taxi-table-vs-frame", "e1",
          "taxi: reading into an Arrow table beats reading into a data frame (the conversion is a cost)",
          _read("pyarrow", TAXI_2010, "arrow_table"), _read("pyarrow", TAXI_2010, "dataframe"),
          source="the post's stacked bars: read into a Table, then the conversion to a data frame on top"),
)

UNTESTABLE = (
    Untestable("e1", "Arrow 2.0 regressed Arrow → R string conversion by ~25 s, fixed after",
               "needs R's arrow package in several versions; Debian ships none and CRAN is not reachable here "
               "(pyarrow versions can be compared with --env instead)"),
    Untestable("e1", "mimalloc read ~1 s faster than jemalloc", "measured on macOS only; the allocator suite "
               "compares them on this OS, where the post made no claim"),
    Untestable("e1", "readr is single-threaded and slowest", "readr runs here, but the post published no figure "
               "for it to compare with"),
)
