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

#: the Python library each engine drives: the one it is named after (pandas-pyarrow is pandas, reading CSV with
#: pyarrow's parser)
LIBRARY_OF: dict[str, str] = {name: name.partition("-")[0] for name in ENGINES}
#: the Python libraries colbench reports on (their versions in the report, history's labels, `env list`, claims),
#: in the order it lists them: every engine's library (tests/engines hold it to LIBRARY_OF), and numpy, which each
#: of them stands on
PYTHON_LIBRARIES: tuple[str, ...] = ("pyarrow", "pandas", "polars", "duckdb", "numpy", "fastparquet")


def get_engine(name: str) -> Engine:
    module, _, attr = ENGINES[name].partition(":")
    engine: Engine = getattr(importlib.import_module(module), attr)()
    return engine


__all__ = ["ENGINES", "LIBRARY_OF", "PYTHON_LIBRARIES", "CsvLayout", "Engine", "get_engine", "shape"]
