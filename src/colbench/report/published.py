# ruff: noqa: E501  (a table of published figures reads best one entry per line)
"""The published figures of the five reference experiments (../shared/reference/experiments.md), keyed the way
our results are, so tables can show them beside what this machine measured. Seconds unless named otherwise."""

from __future__ import annotations

# E1 (8 cores, to data.frame)
E1_SECONDS = {
    ("nyctaxi_2010-01", "pyarrow"): 6.8, ("nyctaxi_2010-01", "data.table"): 23.7, ("nyctaxi_2010-01", "vroom"): 48.4,
    ("fanniemae_2016Q4", "pyarrow"): 14.0, ("fanniemae_2016Q4", "data.table"): 9.8,
}

# E2: case → (Parquet s, CSV s)
E2_SECONDS = {
    ("read", "plain"): (1.08, 41.0), ("read", "str"): (3.68, 52.2), ("read", "cat"): (1.45, 44.1),
    ("continuous_read", "plain"): (7.1, 255.0),
    ("write", "plain"): (5.66, 184.0), ("write", "str"): (10.1, 199.0), ("write", "cat"): (6.56, 192.0),
}
E2_LABELS = {("read", "plain"): "1a", ("read", "str"): "1b", ("read", "cat"): "1c", ("continuous_read", "plain"): "2",
             ("write", "plain"): "3a", ("write", "str"): "3b", ("write", "cat"): "3c"}

# E3: binary 1 KiB values, one thread: (access, batch_rows) → Gbps; the holder API read offsets only
E3_GBPS = {("materialize", 100_000): 9.72, ("offsets", 100_000): 16.50, ("offsets", 10_000): 28.82,
           ("offsets", 1_000): 11.19}
E3_CORE_SCALING_GBPS = {1: 28.8, 2: 52.1, 4: 75.9, 8: 91.8, 16: 168.8}

# E4 (warm unless named)
E4_SECONDS = {"write_arrow": 2.2, "write_csv": 15.0, "read_mmap": 0.0003, "read_stream": 0.32, "read_copy": 0.52,
              "read_csv": 3.3}
E4_FIRST_RUN_SECONDS = {"read_csv": 7.4}

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
