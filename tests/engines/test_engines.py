"""Every engine adapter reads and writes what it claims, with the thread setting applied."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from colbench.engines import ENGINES, LIBRARY_OF, PYTHON_LIBRARIES, CsvLayout, get_engine, shape
from colbench.engines.pyarrow_engine import read_arrow_table, write_arrow

ROWS = 600


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("engines")
    taxi = root / "taxi.csv"
    lines = ["VTS,2010-01-01 00:00:00,1,2.5,CAS,,3.1", "CMT,2010-01-01 00:01:13,2,0.7,Cre,0,4.25"] * (ROWS // 2)
    # the taxi layout: header, one blank line, CRLF rows
    taxi.write_bytes(("vendor_id,pickup,passengers,dist,pay,flag,amt\r\n\r\n" + "\r\n".join(lines) + "\r\n").encode())
    fannie = root / "fannie.csv"
    fannie.write_text("\n".join(["100000000001|01/01/2016||3.5|1000.5|||N",
                                 "100000000002|02/01/2016|X|3.75||||N"] * (ROWS // 2)) + "\n")
    out = {"taxi": taxi, "fannie": fannie}
    for name, path in list(out.items()):
        gz = path.with_suffix(".csv.gz")
        with open(path, "rb") as src, gzip.open(gz, "wb") as dst:
            shutil.copyfileobj(src, dst)
        out[f"{name}.gz"] = gz
    return out


CSV_CASES = [(engine, output) for engine in ENGINES for output in get_engine(engine).csv_outputs]


@pytest.mark.parametrize("engine,output", CSV_CASES)
@pytest.mark.parametrize("source", ["taxi", "taxi.gz", "fannie", "fannie.gz"])
def test_csv_reads_infer_types_from_the_delimiter_alone(files, engine, output, source):
    adapter = get_engine(engine)
    applied = adapter.configure(2)
    assert 2 in applied.values() or "pandas_csv_parser" in applied
    layout = CsvLayout(",", True) if source.startswith("taxi") else CsvLayout("|", False)
    result = adapter.read_csv(files[source], layout, output)
    rows, cols = shape(result)
    assert cols == (7 if source.startswith("taxi") else 8)
    # polars keeps the blank line after the taxi header as one all-null row; the benchmarks check and note it
    extra = 1 if engine == "polars" and source.startswith("taxi") else 0
    assert rows == ROWS + extra
    if output == "arrow_table":
        assert isinstance(result, pa.Table)


def _source_table(files) -> pa.Table:
    return get_engine("pyarrow").read_csv(files["taxi"], CsvLayout(), "arrow_table")


WRITE_CASES = [(e, fmt, codec) for e in ENGINES for fmt, codecs in get_engine(e).write_formats.items()
               for codec in codecs]


@pytest.mark.parametrize("engine,fmt,codec", WRITE_CASES)
def test_writes_round_trip_through_pyarrow_and_the_engine(files, tmp_path, engine, fmt, codec):
    adapter = get_engine(engine)
    adapter.configure(1)
    staged = tmp_path / f"staged.{fmt}"
    write_arrow(_source_table(files), staged, fmt if fmt in ("parquet", "feather", "ipc_stream") else "feather",
                "uncompressed")
    data = adapter.load_for_write(staged, fmt if fmt in ("parquet", "feather", "ipc_stream") else "feather")
    target = tmp_path / f"out.{fmt}"
    adapter.write(data, target, fmt, codec)
    back = read_arrow_table(target, fmt, memory_map=False)
    assert shape(back) == (ROWS, 7)
    for output in adapter.read_formats.get(fmt, ()):
        assert shape(adapter.read(target, fmt, output)) == (ROWS, 7)
    if fmt == "parquet" and codec != "uncompressed":
        import pyarrow.parquet as pq

        assert pq.ParquetFile(target).metadata.row_group(0).column(0).compression.lower() == codec.lower()


def test_capabilities_explain_what_an_engine_cannot_do():
    assert "does not read feather" in get_engine("duckdb").can_read("feather", "dataframe")
    assert "into arrow_table" in get_engine("fastparquet").can_read("parquet", "arrow_table")
    assert get_engine("pyarrow").can_write("feather", "snappy") == "pyarrow does not write feather with snappy"


def test_a_missing_library_is_a_reason_not_a_crash(monkeypatch):
    adapter = get_engine("polars")
    monkeypatch.setattr(type(adapter), "module", "polars_that_is_not_installed")
    assert "not installed" in adapter.unavailable()


@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_prepare_imports_the_data_frame_library_before_timing(engine: str) -> None:
    # a fresh interpreter: pyarrow's to_pandas and DuckDB's df() import pandas on first use, which must not
    # land in the first timed iteration; an Arrow-table read must not load it at all
    import subprocess
    import sys

    if get_engine(engine).unavailable():
        pytest.skip(f"{engine} is not installed")
    code = ("import sys; from colbench.engines import get_engine; e = get_engine(sys.argv[1]); "
            "e.prepare('arrow_table'); before = e.frame_module in sys.modules; e.prepare('dataframe'); "
            "print(e.frame_module, before, e.frame_module in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, engine], capture_output=True, text=True, check=True)
    module, before, after = out.stdout.split()
    assert module == ("polars" if engine == "polars" else "pandas")
    assert after == "True"
    if engine in ("pyarrow", "polars", "duckdb"):  # importing these does not pull in pandas by itself
        assert before == "False"


def test_every_engine_names_the_library_it_drives_and_reports_list_it() -> None:
    """The libraries colbench reports on (engines.PYTHON_LIBRARIES) cover every engine's: a new engine's library is
    listed in the report, history's labels and `env list` without a second list to edit."""
    for name in ENGINES:
        engine = get_engine(name)
        assert LIBRARY_OF[name] == engine.module.partition(".")[0], name
        assert LIBRARY_OF[name] in PYTHON_LIBRARIES, name
