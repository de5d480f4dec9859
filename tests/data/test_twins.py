"""Each twin against the reference (the real files' documented layout and value mix): schema as pyarrow infers it, text
layout, value mix. Small row counts; the properties checked are the ones benchmarks are sensitive to."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

from colbench.data.cache import materialize
from colbench.data.sources import BUILTIN
from colbench.model.benchmark import DataRequest

ROWS = 20_000


def _csv(root: Path, dataset: str, rows: int = ROWS, **options: object):
    return materialize(DataRequest(dataset, "csv", rows=rows, options=dict(options)), root)


def _read(made, **convert: object) -> pa.Table:
    """Read a cached CSV giving pyarrow only what the experiments gave it."""
    read = pacsv.ReadOptions(column_names=made.column_names) if not made.header else pacsv.ReadOptions()
    return pacsv.read_csv(made.path, read_options=read, parse_options=pacsv.ParseOptions(delimiter=made.delimiter),
                          convert_options=pacsv.ConvertOptions(**convert))


def _empty(col: pa.ChunkedArray) -> float:
    """Share of empty fields (null, or "" in string columns: pyarrow does not make strings null)."""
    empty = col.null_count
    if pa.types.is_string(col.type):
        empty += pc.sum(pc.equal(col, "")).as_py() or 0
    return empty / len(col)


def _share(col: pa.ChunkedArray, value: object) -> float:
    return pc.sum(pc.equal(col, value)).as_py() / len(col)


@pytest.mark.parametrize("dataset", ["nyctaxi_2010-01", "fanniemae_2016Q4", "nyctaxi_2016-01", "nyctaxi_2016-04"])
def test_schema_is_what_pyarrow_infers_on_the_real_file(root: Path, dataset: str) -> None:
    made = _csv(root, dataset)
    table = _read(made)
    assert table.num_rows == ROWS == made.rows
    assert [(f.name, str(f.type)) for f in table.schema] == [list(x) for x in BUILTIN[dataset].schema] or \
        [(f.name, str(f.type)) for f in table.schema] == list(BUILTIN[dataset].schema)
    assert made.columns == BUILTIN[dataset].columns


def test_taxi_2010_layout_and_values(root: Path) -> None:
    made = _csv(root, "nyctaxi_2010-01")
    raw = made.path.read_bytes()
    header, blank, first = raw.split(b"\r\n")[:3]
    assert header.decode().split(",") == list(BUILTIN["nyctaxi_2010-01"].column_names)
    assert blank == b"" and first  # one blank line after the header, CRLF everywhere
    assert raw.count(b"\r\n") == raw.count(b"\n") == ROWS + 2
    assert (made.delimiter, made.header) == (",", True)
    t = _read(made)
    vendor = t["vendor_id"]
    for name, share in (("VTS", 0.59), ("CMT", 0.29), ("DDS", 0.12)):
        assert abs(_share(vendor, name) - share) < 0.02
    # VTS records whole minutes, the others seconds
    vts = pc.equal(vendor, "VTS")
    secs = pc.cast(pc.cast(t["pickup_datetime"], pa.int64()), pa.int64()).to_numpy() % 60
    assert (secs[vts.to_numpy(zero_copy_only=False)] == 0).all()
    assert (secs[~vts.to_numpy(zero_copy_only=False)] != 0).mean() > 0.9
    assert (pc.cast(t["dropoff_datetime"], pa.int64()).to_numpy() >= pc.cast(t["pickup_datetime"], pa.int64())
            .to_numpy()).all()
    # vendor-specific payment spellings
    pay = {v: set(pc.unique(pc.filter(t["payment_type"], pc.equal(vendor, v))).to_pylist())
           for v in ("VTS", "CMT", "DDS")}
    assert pay["VTS"] == {"CAS", "CRE"} and {"Cas", "Cre", "No "} <= pay["CMT"] and pay["DDS"] <= {"CAS", "CRE"}
    # store_and_fwd_flag: empty except 0/1 for CMT, and exactly one "*"
    flag = t["store_and_fwd_flag"]
    assert pc.sum(pc.equal(flag, "*")).as_py() == 1
    not_cmt = pc.invert(pc.equal(vendor, "CMT"))
    assert set(pc.unique(pc.filter(flag, not_cmt)).to_pylist()) <= {"", "*"}
    assert set(pc.unique(pc.filter(flag, pc.equal(vendor, "CMT"))).to_pylist()) <= {"0", "1", "", "*"}
    assert 0.5 < _share(flag, "") < 0.8
    assert set(pc.unique(t["passenger_count"]).to_pylist()) <= set(range(1, 7))
    assert 1.8 < pc.mean(t["trip_distance"]).as_py() < 3.4  # mean ≈ 2.6 mi
    lon, lat = t["pickup_longitude"].to_numpy(), t["pickup_latitude"].to_numpy()
    assert 0.012 < (lon == 0).mean() < 0.03 and abs(np.median(lon[lon != 0]) + 73.98) < 0.02
    assert abs(np.median(lat[lat != 0]) - 40.75) < 0.02
    parts = sum(t[c].to_numpy() for c in ("fare_amount", "surcharge", "mta_tax", "tip_amount", "tolls_amount"))
    assert np.allclose(parts, t["total_amount"].to_numpy(), atol=1e-9)
    # floats printed with up to 17 significant digits (coordinates), money as plain decimals
    rows = [line.split(",") for line in raw.decode().split("\r\n")[2:500] if line]
    assert all(re.fullmatch(r"\d+(\.\d{1,2})?", r[i]) for r in rows for i in range(12, 18))
    coords = [r[5] for r in rows if r[5] != "0"]
    assert sum(len(re.sub(r"[-.]", "", x)) == 17 for x in coords) / len(coords) > 0.9


def test_fannie_mae_layout_and_loans(root: Path) -> None:
    made = _csv(root, "fanniemae_2016Q4")
    raw = made.path.read_bytes()
    assert b"\r" not in raw and raw.count(b"\n") == ROWS  # no header, LF
    assert all(line.count(b"|") == 30 for line in raw.splitlines()[:1000])
    assert (made.delimiter, made.header) == ("|", False)
    t = _read(made)
    loans = t["LOAN_ID"].to_numpy()
    assert (np.diff(loans) >= 0).all() and loans.min() >= 10**11 and loans.max() < 10**12  # 12 digits, grouped
    per_loan = np.unique(loans, return_counts=True)[1]
    assert 25 < per_loan[:-1].mean() < 48  # ≈ 36 monthly rows a loan
    age = t["LOAN_AGE"].to_numpy()
    rem = t["REM_MONTHS"].to_numpy()
    upb = t["CURRENT_UPB"].to_numpy(zero_copy_only=False)
    same = loans[1:] == loans[:-1]
    assert (age[1:][same] == age[:-1][same] + 1).all() and (rem[1:][same] == rem[:-1][same] - 1).all()
    # balances amortise (never grow within a loan) and are empty for the loan's first six months
    both = same & ~np.isnan(upb[1:]) & ~np.isnan(upb[:-1])
    assert both.sum() > ROWS / 2 and (upb[1:][both] <= upb[:-1][both]).all()
    first = np.r_[True, ~same]
    month_in_loan = np.arange(len(loans)) - np.maximum.accumulate(np.where(first, np.arange(len(loans)), 0))
    assert np.isnan(upb[month_in_loan < 6]).all()
    assert set(re.findall(rb"\|(\d\d/01/20\d\d)\|", raw[:5000])) and re.search(rb"\|\d\d/20\d\d\|", raw)
    # mostly-empty columns, the two entirely empty ones, the constant flags
    assert _empty(t["SERVICER"]) > 0.9
    assert set(pc.unique(t["DLQ_STATUS"]).to_pylist()) >= {"0", "1", "X"}
    assert _share(t["DLQ_STATUS"], "0") > 0.9
    for col in ("MI_CANCEL_FLAG", "LOAN_HOLDBACK_INDICATOR"):
        assert t[col].null_count == ROWS
    for col in ("FORECLOSURE_COSTS", "NET_SALES_PROCEEDS", "DISPOSITION_DATE", "ZB_DTE"):
        assert 0.97 < _empty(t[col]) < 1
    assert pc.unique(t["SERV_IND"]).to_pylist() == ["N"]
    assert pc.unique(t["RELOCATION_MORTGAGE_INDICATOR"]).to_pylist() == ["N"]
    zb = t["Zero_Bal_Code"]
    assert 0 < ROWS - zb.null_count < len(per_loan)  # only on some loans' last row
    assert set(pc.unique(zb).to_pylist()) - {None} <= {1, 3, 9}


def test_taxi_2016_layout(root: Path) -> None:
    made = _csv(root, "nyctaxi_2016-01")
    raw = made.path.read_bytes()
    lines = raw.split(b"\r\n")
    assert lines[0].decode().split(",") == list(BUILTIN["nyctaxi_2016-01"].column_names)
    assert lines[1] and raw.count(b"\r\n") == ROWS + 1  # header, CRLF, no blank line
    fields = lines[1].split(b",")
    assert re.fullmatch(rb"\d+\.\d\d", fields[4])  # trip_distance with two fixed decimals
    t = _read(made)
    assert set(pc.unique(t["VendorID"]).to_pylist()) == {1, 2}
    assert set(pc.unique(t["store_and_fwd_flag"]).to_pylist()) == {"N", "Y"}
    assert set(pc.unique(t["payment_type"]).to_pylist()) <= set(range(1, 7))
    assert set(pc.unique(t["RatecodeID"]).to_pylist()) <= {1, 2, 3, 4, 5, 6, 99}
    parts = sum(t[c].to_numpy() for c in ("fare_amount", "extra", "mta_tax", "tip_amount", "tolls_amount",
                                          "improvement_surcharge"))
    assert np.allclose(parts, t["total_amount"].to_numpy(), atol=1e-9)
    # coordinates are float32 values printed with 17 significant digits
    lon = t["pickup_longitude"].to_numpy()
    assert (lon.astype(np.float32).astype(np.float64) == lon).all()
    first = _read(made)["tpep_pickup_datetime"].cast(pa.int64()).to_numpy()
    assert ((first >= 1451606400) & (first < 1454284800)).all()  # January 2016
    other = _read(_csv(root, "nyctaxi_2016-02", rows=2000))["tpep_pickup_datetime"].cast(pa.int64()).to_numpy()
    assert ((other >= 1454284800) & (other < 1456790400)).all()  # February


def test_dsib_variants(root: Path) -> None:
    rows = 5_000
    plain = _read(_csv(root, "nyctaxi_2016-01", rows=rows))
    s = _csv(root, "nyctaxi_2016-01", rows=rows, variant="str")
    c = _csv(root, "nyctaxi_2016-01", rows=rows, variant="cat")
    assert s.path.read_bytes().count(b"\r") == 0  # written by pandas' to_csv: LF
    ts, tc = _read(s), _read(c)
    assert ts.column_names == [*plain.column_names, "str"] and ts.num_rows == rows
    assert ts.schema.field("store_and_fwd_flag").type == pa.bool_()
    strs = ts["str"].to_pylist()
    assert all(re.fullmatch(r"[0-9a-f]{64}", x) for x in strs) and len(set(strs)) == rows
    cats = tc["str"].to_pylist()
    assert all(re.fullmatch(r"[0-9a-f]-[0-9a-f]-[0-9a-f]", x) for x in cats)
    assert 1000 < len(set(cats)) <= 4096
    assert cats == [f"{x[0]}-{x[1]}-{x[2]}" for x in strs]  # cat comes from the same hash
    # same values as the plain file (modulo the bool flag)
    for col in ("fare_amount", "pickup_longitude", "tpep_pickup_datetime"):
        assert ts[col].equals(plain[col])
    # binary formats keep store_and_fwd_flag as bool, as the post did
    pq_plain = pq.read_table(materialize(DataRequest("nyctaxi_2016-01", "parquet", rows=rows), root).path)
    assert pq_plain.schema.field("store_and_fwd_flag").type == pa.bool_()
    assert pq.read_table(materialize(DataRequest("nyctaxi_2016-01", "parquet", rows=rows,
                                                 options={"variant": "cat"}), root).path)["str"].equals(tc["str"])


@pytest.mark.filterwarnings("ignore:Feather V1:DeprecationWarning")
def test_every_format_holds_the_same_data(root: Path) -> None:
    rows = 3_000
    base = _read(_csv(root, "nyctaxi_2010-01", rows=rows))
    readers = {
        "parquet": lambda p: pq.read_table(p),
        "feather": lambda p: ipc.open_file(p).read_all(),
        "feather_v1": lambda p: pa.feather.read_table(p),
        "ipc_file": lambda p: ipc.open_file(p).read_all(),
        "ipc_stream": lambda p: ipc.open_stream(p).read_all(),
    }
    import pyarrow.feather  # noqa: F401 - for pa.feather

    for fmt, codecs in (("parquet", ("uncompressed", "snappy", "zstd", "lz4", "gzip", "brotli")),
                        ("feather", ("uncompressed", "lz4", "zstd")), ("feather_v1", ("uncompressed",)),
                        ("ipc_file", ("uncompressed", "lz4", "zstd")), ("ipc_stream", ("uncompressed", "zstd"))):
        for codec in codecs:
            made = materialize(DataRequest("nyctaxi_2010-01", fmt, codec, rows=rows), root)
            table = readers[fmt](made.path)
            if fmt == "parquet":  # Parquet has no second unit: timestamp[s] comes back as [ms]
                table = table.cast(base.schema)
            assert table.equals(base), (fmt, codec)
            assert (made.rows, made.columns, made.delimiter, made.header) == (rows, 18, None, None)
    gz = materialize(DataRequest("nyctaxi_2010-01", "csv", "gzip", rows=rows), root)
    assert gz.path.suffix == ".gz" and _read(gz).equals(base)


def test_experiment_frames(root: Path) -> None:
    e4 = materialize(DataRequest("int64_frame", "csv", rows=1000), root)
    t = _read(e4)
    assert t.column_names == [f"x{i}" for i in range(1, 11)] and t.schema.types == [pa.int64()] * 10
    assert t["x1"].to_pylist()[:3] == [1, 2, 3] and t["x10"].to_pylist()[-1] == 1009
    arrow = ipc.open_file(materialize(DataRequest("int64_frame", "ipc_file", rows=1000), root).path).read_all()
    assert arrow.equals(t)
    e3 = materialize(DataRequest("ipc_column", "ipc_file", rows=1000,
                                 options={"type": "binary", "value_size": 64, "chunk_size": 300}), root)
    reader = ipc.open_file(e3.path)
    assert reader.num_record_batches == 4 and reader.get_batch(0).num_rows == 300
    col = reader.read_all()["c0"]
    assert col.type == pa.binary() and set(pc.binary_length(col).to_pylist()) == {64}
    ints = ipc.open_file(materialize(DataRequest("ipc_column", "ipc_file", rows=100, options={"type": "int32"}),
                                     root).path).read_all()
    assert ints.schema.types == [pa.int32()]
    num = _read(materialize(DataRequest("vroom_numeric", "csv", rows=2000), root))
    assert num.num_columns == 25 and set(num.schema.types) == {pa.float64()}
    assert abs(pc.mean(num["X1"]).as_py()) < 0.1 and 0.9 < pc.stddev(num["X1"]).as_py() < 1.1
    chars = _read(materialize(DataRequest("vroom_character", "csv", rows=2000, options={"columns": 5}), root))
    lengths = pc.utf8_length(chars["X3"]).to_numpy()
    assert chars.num_columns == 5 and set(chars.schema.types) == {pa.string()}
    assert lengths.min() == 5 and lengths.max() == 25


def test_taxi_star_flag_lies_between_freads_type_detection_jumps(tmp_path: Path) -> None:
    # fread guesses types from 100 lines at each of 101 evenly spaced byte offsets of the data; on the real
    # 14.86 M-row file its one "*" is almost surely outside them (fread bumps the column and re-reads it), so
    # the twin's must be too, at every benchmark size, or fread's time jumps with the row count
    rows = 60_000
    made = _csv(tmp_path, "nyctaxi_2010-01", rows)
    data = made.path.read_bytes()
    first = data.index(b"\r\n\r\n") + 4  # the first data row (header, blank line)
    star = data.index(b",*,")
    lines = data[first:].count(b"\r\n")
    assert lines == rows
    fraction = (star - first) / (len(data) - first) * 100  # in units of fread's 100 jumps
    window = 100 / rows * 100  # 100 sampled lines, in the same units
    assert fraction % 1 > window + 0.1 and fraction % 1 < 0.9, "the * is inside or next to a jump's sample"
