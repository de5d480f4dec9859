"""One adapter per library. `get_engine(name)` imports only the adapter asked for."""

from __future__ import annotations

import importlib

from colbench.engines.base import CsvLayout, Engine, shape

ENGINES: dict[str, str] = {
    "pyarrow": "colbench.engines.pyarrow_engine:PyArrowEngine",
    "pandas": "colbench.engines.pandas_engine:PandasEngine",
    "pandas-pyarrow": "colbench.engines.pandas_engine:PandasPyArrowEngine",
    "polars": "colbench.engines.polars_engine:PolarsEngine",
    "duckdb": "colbench.engines.duckdb_engine:DuckDBEngine",
    "fastparquet": "colbench.engines.fastparquet_engine:FastparquetEngine",
}


def get_engine(name: str) -> Engine:
    module, _, attr = ENGINES[name].partition(":")
    engine: Engine = getattr(importlib.import_module(module), attr)()
    return engine


__all__ = ["ENGINES", "CsvLayout", "Engine", "get_engine", "shape"]
