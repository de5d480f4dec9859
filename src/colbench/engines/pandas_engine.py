"""pandas: its own C CSV parser, `engine="pyarrow"`, and the pyarrow-backed Parquet/Feather functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from colbench.engines.base import Applied, CsvLayout, Engine, codec_or_none, release
from colbench.engines.pyarrow_engine import FEATHER_CODECS, PARQUET_CODECS, feather_unsupported, set_arrow_threads


class PandasEngine(Engine):
    name = "pandas"
    module = "pandas"
    csv_parser = "c"
    csv_outputs = ("dataframe",)
    read_formats = {"parquet": ("dataframe",), "feather": ("dataframe",), "feather_v1": ("dataframe",)}
    write_formats = {"parquet": PARQUET_CODECS, "feather": FEATHER_CODECS}

    def configure(self, threads: int) -> Applied:
        # pandas' Parquet/Feather and engine="pyarrow" run on Arrow's pools
        applied = set_arrow_threads(threads)
        return {"arrow_cpu": applied["arrow_cpu"], "pandas_csv_parser": self.csv_parser}

    def read_unsupported(self, fmt: str, codec: str) -> str | None:
        return feather_unsupported(fmt, codec)  # pandas reads Feather and Parquet through pyarrow

    def read_csv(self, path: Path, layout: CsvLayout, output: str) -> Any:
        import pandas as pd

        return pd.read_csv(path, sep=layout.delimiter, header=0 if layout.header else None, engine=self.csv_parser)

    def read(self, path: Path, fmt: str, output: str, memory_map: bool = False) -> Any:
        import pandas as pd

        if fmt == "parquet":
            return pd.read_parquet(path, engine="pyarrow", memory_map=memory_map)
        return pd.read_feather(path)

    def load_for_write(self, path: Path, fmt: str) -> Any:
        from colbench.engines.pyarrow_engine import read_arrow_table

        return read_arrow_table(path, fmt, False).to_pandas()

    def write(self, data: Any, path: Path, fmt: str, codec: str) -> None:
        if fmt == "parquet":
            data.to_parquet(path, engine="pyarrow", compression=codec_or_none(codec), index=False)
        else:
            data.to_feather(path, compression=codec)


class PandasPyArrowEngine(PandasEngine):
    """pandas.read_csv(engine="pyarrow"): Arrow's multithreaded parser behind the pandas API."""

    name = "pandas-pyarrow"
    csv_parser = "pyarrow"

    def csv_unsupported(self) -> str | None:
        import pandas as pd

        if release(pd.__version__) < (1, 4):
            return f"pandas {pd.__version__} has no engine=\"pyarrow\" for read_csv (pandas 1.4 added it)"
        return None
    read_formats = {}
    write_formats = {}
