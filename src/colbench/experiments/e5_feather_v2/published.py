# ruff: noqa: E501  (a table of published figures reads best one entry per line)
"""Published figures of E5 — Feather V2 vs Parquet (2020), keyed the way our results are. Seconds unless named otherwise."""

from __future__ import annotations

# E5 (4 threads): (source, format, codec, output) → seconds; sizes in MiB
E5_READ_SECONDS = {
    ("fanniemae_2016Q4", "parquet", "snappy", "arrow_table"): 1.88, ("nyctaxi_2010-01", "parquet", "snappy", "arrow_table"): 0.78,
    ("fanniemae_2016Q4", "parquet", "snappy", "dataframe"): 4.17, ("nyctaxi_2010-01", "parquet", "snappy", "dataframe"): 7.54,
    ("fanniemae_2016Q4", "feather", "uncompressed", "arrow_table"): 1.13, ("fanniemae_2016Q4", "feather", "lz4", "arrow_table"): 0.49,
    ("fanniemae_2016Q4", "feather", "zstd", "arrow_table"): 0.81, ("nyctaxi_2010-01", "feather", "uncompressed", "arrow_table"): 0.61,
    ("nyctaxi_2010-01", "feather", "lz4", "arrow_table"): 0.41, ("nyctaxi_2010-01", "feather", "zstd", "arrow_table"): 0.89,
    ("fanniemae_2016Q4", "feather", "uncompressed", "dataframe"): 3.56, ("fanniemae_2016Q4", "feather", "lz4", "dataframe"): 2.78,
    ("fanniemae_2016Q4", "feather", "zstd", "dataframe"): 3.06, ("nyctaxi_2010-01", "feather", "uncompressed", "dataframe"): 7.37,
    ("nyctaxi_2010-01", "feather", "lz4", "dataframe"): 7.12, ("nyctaxi_2010-01", "feather", "zstd", "dataframe"): 7.54,
}


E5_SIZE_MIB = {
    ("fanniemae_2016Q4", "feather", "uncompressed"): 4812, ("nyctaxi_2010-01", "feather", "uncompressed"): 2390,
    ("fanniemae_2016Q4", "feather", "lz4"): 609, ("nyctaxi_2010-01", "feather", "lz4"): 1121,
    ("fanniemae_2016Q4", "feather", "zstd"): 500, ("nyctaxi_2010-01", "feather", "zstd"): 784,
    ("fanniemae_2016Q4", "parquet", "uncompressed"): 372, ("nyctaxi_2010-01", "parquet", "uncompressed"): 1188,
    ("fanniemae_2016Q4", "parquet", "snappy"): 137, ("nyctaxi_2010-01", "parquet", "snappy"): 720,
}
