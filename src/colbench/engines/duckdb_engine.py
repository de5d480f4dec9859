"""DuckDB: its own CSV sniffer and Parquet reader, materialised as an Arrow table or a pandas data frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from colbench.engines.base import Applied, CsvLayout, Engine, codec_or_none


class DuckDBEngine(Engine):
    name = "duckdb"
    module = "duckdb"
    csv_outputs = ("arrow_table", "dataframe")
    read_formats = {"parquet": ("arrow_table", "dataframe")}
    write_formats = {"parquet": ("uncompressed", "snappy", "zstd", "lz4", "gzip", "brotli")}

    def __init__(self) -> None:
        self._con: Any = None
        self._threads = 1

    def connection(self) -> Any:
        if self._con is None:
            import duckdb

            self._con = duckdb.connect()
            self._con.execute(f"SET threads = {int(self._threads)}").fetchall()
        return self._con

    def configure(self, threads: int) -> Applied:
        self._threads = threads
        con = self.connection()
        con.execute(f"SET threads = {int(threads)}").fetchall()
        return {"duckdb": int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])}

    def _materialize(self, relation: Any, output: str) -> Any:
        if output == "arrow_table":
            # one call under the names DuckDB versions gave it: to_arrow_table (newest; 2.0 deprecates
            # fetch_arrow_table), fetch_arrow_table, arrow (oldest)
            name = next((n for n in ("to_arrow_table", "fetch_arrow_table") if hasattr(relation, n)), "arrow")
            return getattr(relation, name)()
        return relation.df()

    def read_csv(self, path: Path, layout: CsvLayout, output: str) -> Any:
        options = {"sample_size": -1} if layout.full_inference else {}
        relation = self.connection().read_csv(str(path), sep=layout.delimiter, header=layout.header, **options)
        return self._materialize(relation, output)

    def read(self, path: Path, fmt: str, output: str, memory_map: bool = False) -> Any:
        return self._materialize(self.connection().read_parquet(str(path)), output)

    def load_for_write(self, path: Path, fmt: str) -> Any:
        from colbench.engines.pyarrow_engine import read_arrow_table

        return read_arrow_table(path, fmt, False)

    def write(self, data: Any, path: Path, fmt: str, codec: str) -> None:
        self.connection().from_arrow(data).write_parquet(str(path), compression=codec_or_none(codec) or "uncompressed")
