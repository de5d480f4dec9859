"""The claims of E5 (Feather V2 with compression, 2020): pyarrow, 4 threads in the post (the most here)."""

from __future__ import annotations

from colbench.benchmarks.common import FANNIE, TAXI_2010
from colbench.experiments.e5_feather_v2.published import E5_READ_SECONDS, E5_SIZE_MIB
from colbench.model.claims import Claim, ClaimCase, Untestable


def _read(source: str, fmt: str, codec: str, output: str = "arrow_table", cache: str = "warm") -> ClaimCase:
    return ClaimCase("file-read", {"engine": "pyarrow", "source": source, "format": fmt, "codec": codec,
                                   "output": output, "memory_map": False, "allocator": "default", "cache": cache})


def _size(source: str, fmt: str, codec: str) -> ClaimCase:
    return ClaimCase("file-write", {"engine": "pyarrow", "source": source, "format": fmt, "codec": codec,
                                    "input": "arrow_table", "allocator": "default", "cache": "warm"},
                     metric="file_size")


def _read_claim(key: str, text: str, source: str, fast: tuple[str, str], slow: tuple[str, str],
                output: str = "arrow_table") -> Claim:
    f, s = E5_READ_SECONDS.get((source, *fast, output)), E5_READ_SECONDS.get((source, *slow, output))
    return Claim(key, "e5", text, _read(source, *fast, output), _read(source, *slow, output),
                 published=s / f if f and s else None, source=f"{f} s vs {s} s" if f and s else "")


def _smaller(key: str, text: str, source: str, small: tuple[str, str], large: tuple[str, str]) -> Claim:
    a, b = E5_SIZE_MIB[(source, *small)], E5_SIZE_MIB[(source, *large)]
    return Claim(key, "e5", text, _size(source, *small), _size(source, *large), published=b / a,
                 source=f"{a} MiB vs {b} MiB")


CLAIMS = (
    _read_claim("e5-fannie-lz4-vs-parquet", "Fannie Mae → Arrow table: Feather LZ4 beats Parquet snappy", FANNIE,
                ("feather", "lz4"), ("parquet", "snappy")),
    _read_claim("e5-taxi-lz4-vs-parquet", "taxi → Arrow table: Feather LZ4 beats Parquet snappy", TAXI_2010,
                ("feather", "lz4"), ("parquet", "snappy")),
    _read_claim("e5-fannie-feather-vs-parquet", "Fannie Mae → Arrow table: uncompressed Feather beats Parquet "
                "snappy", FANNIE, ("feather", "uncompressed"), ("parquet", "snappy")),
    Claim("e5-fannie-table-vs-frame", "e5", "Fannie Mae, Parquet: → Arrow table beats → data frame (the conversion "
          "to pandas costs)", _read(FANNIE, "parquet", "snappy"), _read(FANNIE, "parquet", "snappy", "dataframe"),
          published=E5_READ_SECONDS[(FANNIE, "parquet", "snappy", "dataframe")]
          / E5_READ_SECONDS[(FANNIE, "parquet", "snappy", "arrow_table")], source="1.88 s vs 4.17 s"),
    _smaller("e5-fannie-size-parquet-vs-zstd", "Fannie Mae: Parquet snappy is smaller than Feather ZSTD", FANNIE,
             ("parquet", "snappy"), ("feather", "zstd")),
    _smaller("e5-fannie-size-parquet-unc-vs-zstd", "Fannie Mae: even uncompressed Parquet is smaller than Feather "
             "ZSTD", FANNIE, ("parquet", "uncompressed"), ("feather", "zstd")),
    _smaller("e5-fannie-size-zstd-vs-lz4", "Fannie Mae: ZSTD is smaller than LZ4", FANNIE, ("feather", "zstd"),
             ("feather", "lz4")),
    _smaller("e5-fannie-size-lz4-vs-unc", "Fannie Mae: LZ4 Feather is much smaller than uncompressed", FANNIE,
             ("feather", "lz4"), ("feather", "uncompressed")),
    _smaller("e5-taxi-size-parquet-vs-zstd", "taxi: Parquet snappy is smaller than Feather ZSTD", TAXI_2010,
             ("parquet", "snappy"), ("feather", "zstd")),
    _smaller("e5-taxi-size-lz4-vs-unc", "taxi: LZ4 Feather is smaller than uncompressed", TAXI_2010,
             ("feather", "lz4"), ("feather", "uncompressed")),
    Claim("e5-cold-lz4-vs-unc", "e5", "cold page cache, Fannie Mae → Arrow table: compressed Feather beats "
          "uncompressed (the disk is the bottleneck)", _read(FANNIE, "feather", "lz4", cache="cold"),
          _read(FANNIE, "feather", "uncompressed", cache="cold"),
          published=E5_READ_SECONDS[(FANNIE, "feather", "uncompressed", "arrow_table")]
          / E5_READ_SECONDS[(FANNIE, "feather", "lz4", "arrow_table")],
          source="1.13 s vs 0.49 s from NVMe: \"IO is a bottleneck\""),
)

UNTESTABLE = (
    Untestable("e5", "FST, RDS and Feather V1 (R)", "R's arrow, fst and feather packages are not in Debian; the "
               "Python side of the post is what runs here"),
    Untestable("e5", "the R readers are about 2 s slower than pyarrow's", "needs R's arrow package (not in Debian)"),
    Untestable("e5", "compressed Feather also writes faster than uncompressed and than Parquet",
               "the post gave this as a figure without numbers; colbench measures the writes (e5 table) but has "
               "no published ratio to test against"),
)
