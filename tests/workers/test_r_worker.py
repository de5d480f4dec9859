"""The R worker (colbench/workers/r/worker.R) run for real: `Rscript worker.R case.json result.json`.

Small CSVs in the two real layouts of E1 are written here:
- taxi-like (nyctaxi_2010-01): header line, ONE blank line, CRLF rows, 18 columns with strings, datetimes,
  ints, floats printed with up to 17 significant digits, a mostly empty flag column with one '*' value;
- Fannie-Mae-like (fanniemae_2016Q4): '|'-delimited, no header, LF rows, 31 columns, mostly empty columns and
  two entirely empty ones;
plain and gzip. Every reader (data.table, readr, vroom) reads every file with 1 and 2 threads (readr: 1 only),
and the failure paths (missing file, an exception inside a reader, invalid params, a wrong expected shape,
an unreadable case file) must come back as error results or a clean non-zero exit.

Install R with `colbench setup r`; without `Rscript` the whole module is skipped (fails under
COLBENCH_REQUIRE_ALL=1, as in CI).
"""

from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import subprocess
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from colbench.model.protocol import report_violation
from colbench.runtimes.sources import worker_file

ROOT = Path(__file__).resolve().parents[2]
WORKER = worker_file("r", "worker.R")
RSCRIPT = shutil.which("Rscript")

REQUIRE_ALL = os.environ.get("COLBENCH_REQUIRE_ALL") == "1"  # CI: a missing R is a failure, not a skip

# real R processes, a second or more each: the full suite, not the fast tier
pytestmark = [pytest.mark.skipif(
    RSCRIPT is None and not REQUIRE_ALL, reason="Rscript not found: run `colbench setup r` to install R"
), pytest.mark.slow]


@pytest.fixture(autouse=True)
def _require_r() -> None:
    if RSCRIPT is None:
        pytest.fail("Rscript not found and COLBENCH_REQUIRE_ALL=1: run `colbench setup r`")


TAXI_ROWS = 1500
FANNIE_ROWS = 1200
FANNIE_COLUMNS = 31
READERS = ("data.table", "readr", "vroom")
VERSION_KEYS = ("R", "jsonlite")  # always loaded; a reader package only when the case loaded it


# ---------------------------------------------------------------------------------------------------------
# data


def _taxi_text(rows: int, seed: int = 7) -> str:
    rng = random.Random(seed)
    header = (
        "vendor_id,pickup_datetime,dropoff_datetime,passenger_count,trip_distance,pickup_longitude,"
        "pickup_latitude,rate_code,store_and_fwd_flag,dropoff_longitude,dropoff_latitude,payment_type,"
        "fare_amount,surcharge,mta_tax,tip_amount,tolls_amount,total_amount"
    )
    start = datetime(2010, 1, 1)
    lines = []
    for i in range(rows):
        vendor = rng.choices(("VTS", "CMT", "DDS"), weights=(59, 29, 12))[0]
        pickup = start + timedelta(seconds=rng.randrange(31 * 86400))
        if vendor == "VTS":
            pickup = pickup.replace(second=0)
        dropoff = pickup + timedelta(seconds=rng.randrange(60, 3600))
        if vendor == "VTS":
            dropoff = dropoff.replace(second=0)
        distance = round(rng.expovariate(1 / 2.6), 2)
        zero = rng.random() < 0.02
        lon = 0.0 if zero else -73.99 + rng.gauss(0, 0.03)
        lat = 0.0 if zero else 40.75 + rng.gauss(0, 0.03)
        flag = str(rng.randrange(2)) if vendor == "CMT" else ""
        if i == rows - 300:
            flag = "*"  # the real file has exactly one such value
        payment = {"VTS": ("CASH", "Credit"), "CMT": ("Cas", "Cre", "No "), "DDS": ("CAS", "CRE")}[vendor]
        fare = round(2.5 + distance * 2.0, 1)
        surcharge = rng.choice((0.0, 0.5, 1.0))
        tip = round(rng.random() * 3, 2) if rng.random() < 0.3 else 0.0
        total = fare + surcharge + 0.5 + tip  # float sums print with up to 17 significant digits
        lines.append(
            ",".join(
                [
                    vendor,
                    f"{pickup:%Y-%m-%d %H:%M:%S}",
                    f"{dropoff:%Y-%m-%d %H:%M:%S}",
                    str(rng.randint(1, 6)),
                    repr(distance),
                    repr(lon),
                    repr(lat),
                    "1",
                    flag,
                    repr(lon + 0.01),
                    repr(lat + 0.01),
                    rng.choice(payment),
                    repr(fare),
                    repr(surcharge),
                    "0.5",
                    repr(tip),
                    "0",
                    repr(total),
                ]
            )
        )
    return header + "\r\n\r\n" + "\r\n".join(lines) + "\r\n"


def _fannie_text(rows: int, seed: int = 11) -> str:
    rng = random.Random(seed)
    lines = []
    loan, month, age = 0, 0, 36
    for _ in range(rows):
        if month >= age:
            loan, month, age = loan + 1, 0, rng.randint(12, 48)
        last = month == age - 1
        year, mon = 2017 + month // 12, month % 12 + 1
        fields = [
            f"{100000000000 + loan * 7919:012d}",  # LOAN_ID
            f"{mon:02d}/01/{year}",  # ACT_PERIOD
            "BANK OF SOMEWHERE" if rng.random() < 0.05 else "",  # SERVICER, mostly empty
            repr(rng.choice((3.75, 4.125, 4.5, 3.99))),  # ORIG_RATE
            "" if month < 6 else repr(round(250000 - 900.5 * month, 2)),  # CURRENT_UPB
            str(month),
            str(360 - month),
            str(360 - month),  # LOAN_AGE, REM_MONTHS, ADJ_REM_MONTHS
            f"{mon:02d}/{year + 30}",  # MATR_DT
            f"{rng.randrange(10000, 99999):05d}",  # MSA
            rng.choice(("0", "0", "0", "1", "X")),  # DLQ_STATUS
            "N",  # MOD_FLAG
            "01" if last else "",  # Zero_Bal_Code on the last row
            f"{mon:02d}/{year}" if last else "",  # ZB_DTE
            "",
            "",
            "",  # three more dates, almost always empty
        ]
        fields += [repr(round(rng.random() * 1000, 2)) if rng.random() < 0.01 else "" for _ in range(11)]
        fields += ["", ""]  # two entirely empty columns
        fields.append("N")  # SERV_IND
        assert len(fields) == FANNIE_COLUMNS
        lines.append("|".join(fields))
        month += 1
    return "\n".join(lines) + "\n"


LAYOUTS = {
    # source name, delimiter, header, rows, columns, text factory
    "taxi": ("nyctaxi_2010-01", ",", True, TAXI_ROWS, 18, lambda: _taxi_text(TAXI_ROWS)),
    "fannie": ("fanniemae_2016Q4", "|", False, FANNIE_ROWS, FANNIE_COLUMNS, lambda: _fannie_text(FANNIE_ROWS)),
}


@pytest.fixture(scope="session")  # not module: the module's tests spread over the xdist workers (tests/xdist_plan.py)
def data_files(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    folder = tmp_path_factory.mktemp("r-worker-data")
    files = {}
    for layout, (*_, factory) in LAYOUTS.items():
        raw = factory().encode()
        plain = folder / f"{layout}.csv"
        plain.write_bytes(raw)
        packed = folder / f"{layout}.csv.gz"
        packed.write_bytes(gzip.compress(raw, mtime=0))
        files[(layout, "none")] = plain
        files[(layout, "gzip")] = packed
    return files


def test_generated_layouts_are_the_real_ones(data_files):
    taxi = data_files[("taxi", "none")].read_bytes()
    head, blank, first = taxi.split(b"\r\n")[:3]
    assert head.startswith(b"vendor_id,") and blank == b"" and first.count(b",") == 17
    assert taxi.count(b"\r\n") == TAXI_ROWS + 2 and taxi.count(b"\n") == taxi.count(b"\r\n")
    fannie = data_files[("fannie", "none")].read_text().splitlines()
    assert len(fannie) == FANNIE_ROWS and b"\r" not in data_files[("fannie", "none")].read_bytes()
    columns = list(zip(*(line.split("|") for line in fannie), strict=True))
    assert len(columns) == FANNIE_COLUMNS
    assert sum(all(v == "" for v in col) for col in columns) >= 2


# ---------------------------------------------------------------------------------------------------------
# running the worker


def _case(
    path: Path,
    layout: str,
    *,
    reader: str,
    compression: str,
    threads: int = 1,
    iterations: int = 2,
    warmup: int = 1,
    cache: str = "warm",
    rows: int | None = None,
    columns: int | None = None,
    **extra_params: Any,
) -> dict[str, Any]:
    source, delimiter, header, n_rows, n_columns, _ = LAYOUTS[layout]
    params = {
        "reader": reader,
        "source": source,
        "compression": compression,
        "output": "dataframe",
        "threads": threads,
        "allocator": "default",
        "cache": cache,
        **extra_params,
    }
    return {
        "protocol": 1,
        "benchmark": "csv-read",
        "case_id": "0123456789abcdef",
        "params": params,
        "inputs": {
            "data": {
                "path": str(path),
                "size_bytes": path.stat().st_size if path.exists() else None,
                "dataset": source,
                "format": "csv",
                "codec": None if compression == "none" else "gzip",
                "rows": n_rows if rows is None else rows,
                "columns": n_columns if columns is None else columns,
                "delimiter": delimiter,
                "header": header,
            }
        },
        "iterations": iterations,
        "warmup": warmup,
        "threads": threads,
        "allocator": "default",
        "cache": cache,
        "seed": 42,
        "scratch_dir": str(path.parent),
    }


def _run(tmp_path: Path, case: dict[str, Any] | str, name: str = "case") -> tuple[subprocess.CompletedProcess, Any]:
    case_path = tmp_path / f"{name}.json"
    result_path = tmp_path / f"{name}.result.json"
    case_path.write_text(case if isinstance(case, str) else json.dumps(case))
    proc = subprocess.run(
        [RSCRIPT, str(WORKER), str(case_path), str(result_path)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    result = json.loads(result_path.read_text()) if result_path.exists() else None
    assert not list(tmp_path.glob(f"{name}.result.json.tmp*")), "temp result file left behind"
    return proc, result


def _assert_result_shape(result: dict[str, Any]) -> None:
    """What every result must carry, ok or error (docs/protocol.md)."""
    assert report_violation(result) is None, report_violation(result)  # the schema every worker follows
    assert result["protocol"] == 1
    assert result["status"] in ("ok", "error")
    for key in ("samples", "warmup_samples"):
        lengths = {len(v) for v in result[key].values()}
        assert len(lengths) <= 1, f"{key} lists differ in length: {result[key]}"
        assert all(isinstance(x, int | float) for v in result[key].values() for x in v)
    assert set(result["samples"]) >= {"wall_s", "cpu_user_s", "cpu_sys_s"}
    assert result["units"] == {"gc_s": "s"}
    for name in VERSION_KEYS:
        assert isinstance(result["versions"][name], str) and result["versions"][name][0].isdigit()
    assert result["runtime"] == {"name": "r", "version": result["versions"]["R"]}
    assert isinstance(result["memory"]["peak_rss_bytes"], int) and result["memory"]["peak_rss_bytes"] > 10 << 20
    assert isinstance(result["warnings"], list) and all(isinstance(w, str) for w in result["warnings"])
    if result["status"] == "ok":
        assert result["error"] is None
    else:
        assert set(result["error"]) == {"kind", "message", "traceback"}
        assert result["error"]["kind"] in ("exception", "check", "oom", "invalid")
        assert result["error"]["message"]


# ---------------------------------------------------------------------------------------------------------
# every reader × layout × compression × threads

MATRIX = [
    (reader, layout, compression, threads)
    for reader in READERS
    for layout in LAYOUTS
    for compression in ("none", "gzip")
    for threads in (1, 2)
    if not (reader == "readr" and threads != 1)
]


@pytest.mark.parametrize(
    ("reader", "layout", "compression", "threads"), MATRIX, ids=[f"{r}-{lay}-{c}-t{t}" for r, lay, c, t in MATRIX]
)
def test_reads_each_layout(tmp_path, data_files, reader, layout, compression, threads):
    path = data_files[(layout, compression)]
    _, _, _, rows, columns, _ = LAYOUTS[layout]
    proc, result = _run(
        tmp_path, _case(path, layout, reader=reader, compression=compression, threads=threads, iterations=3, warmup=1)
    )
    assert proc.returncode == 0, proc.stderr
    assert result is not None, proc.stderr
    _assert_result_shape(result)
    assert result["status"] == "ok", result["error"]
    assert proc.stdout == ""
    # the reader's version, and no version of a reader the case did not load (readr loads vroom: it parses with it)
    assert result["versions"][reader][0].isdigit()
    assert set(result["versions"]) & set(READERS) == ({"readr", "vroom"} if reader == "readr" else {reader})

    samples = result["samples"]
    assert len(samples["wall_s"]) == 3 and all(0 < s < 30 for s in samples["wall_s"])
    assert all(s >= 0 for s in samples["cpu_user_s"] + samples["cpu_sys_s"] + samples["gc_s"])
    assert len(result["warmup_samples"]["wall_s"]) == 1
    assert result["first_iteration"] == {k: v[0] for k, v in result["warmup_samples"].items()}
    assert result["output"] == {"rows": rows, "columns": columns, "checksum": None, "file_size_bytes": None}
    assert result["work"] == {"bytes": path.stat().st_size, "rows": rows}

    applied = result["threads"]["applied"]
    assert result["threads"]["requested"] == threads
    expected = 1 if reader == "readr" else threads
    if reader == "data.table":  # data.table reads back what OpenMP grants: never more than the CPUs we have
        assert 1 <= applied["data.table"] <= threads
        if len(os.sched_getaffinity(0)) >= threads:
            assert applied["data.table"] == threads
    else:
        assert applied[reader] == expected
    assert applied["cpu_affinity"] == sorted(os.sched_getaffinity(0))
    assert result["cache"] == {"requested": "warm", "achieved": "warm"}
    assert result["allocator"] == {"requested": "default", "actual": None}
    assert result["memory"]["engine_memory"] == "r_gc_max_used"
    assert isinstance(result["memory"]["engine_peak_bytes"], int) and result["memory"]["engine_peak_bytes"] > 1 << 20

    if layout == "taxi" and reader == "readr":
        # readr guesses types from the first 1000 rows: the one '*' of the mostly empty store_and_fwd_flag
        # column becomes NA, which is reported as a warning, not an error (vroom guesses from rows spread over
        # the whole file and, on this small file, sees the '*' and reads the column as character)
        assert any("parsing problem" in w for w in result["warnings"]), result["warnings"]
    if layout == "taxi" and reader == "data.table":
        assert any("did not use the header line" in w for w in result["warnings"]), result["warnings"]


def test_cold_cache_evicts_before_every_iteration(tmp_path, data_files):
    path = data_files[("taxi", "gzip")]
    proc, result = _run(tmp_path, _case(path, "taxi", reader="vroom", compression="gzip", threads=2, cache="cold"))
    assert result is not None, proc.stderr
    _assert_result_shape(result)
    assert result["status"] == "ok", result["error"]
    assert result["cache"]["requested"] == "cold"
    if result["cache"]["achieved"] != "cold":  # honest fallback when eviction is impossible here
        assert any("page cache" in w for w in result["warnings"])


# ---------------------------------------------------------------------------------------------------------
# failures become error results


def test_missing_input_file_is_an_error_result(tmp_path, data_files):
    missing = tmp_path / "no-such-file.csv"
    proc, result = _run(tmp_path, _case(missing, "taxi", reader="data.table", compression="none"))
    assert proc.returncode == 0 and result is not None, proc.stderr
    _assert_result_shape(result)
    assert result["status"] == "error"
    assert result["error"]["kind"] == "exception"
    assert str(missing) in result["error"]["message"] and "does not exist" in result["error"]["message"]
    assert result["samples"]["wall_s"] == [] and result["first_iteration"] is None


@pytest.mark.parametrize("reader", READERS)
def test_exception_inside_the_reader_is_an_error_result(tmp_path, data_files, reader):
    """A corrupt gzip stream makes every reader raise an R error in the middle of the read."""
    raw = bytearray(data_files[("taxi", "gzip")].read_bytes())
    rng = random.Random(3)
    for k in range(len(raw) // 2, len(raw) // 2 + 64):
        raw[k] = rng.randrange(256)
    corrupt = tmp_path / "corrupt.csv.gz"
    corrupt.write_bytes(bytes(raw))
    proc, result = _run(tmp_path, _case(corrupt, "taxi", reader=reader, compression="gzip"))
    assert proc.returncode == 0 and result is not None, proc.stderr
    _assert_result_shape(result)
    assert result["status"] == "error"
    assert result["error"]["kind"] == "exception"
    assert "connection" in result["error"]["message"]
    traceback = result["error"]["traceback"]
    assert "read()" in traceback and ("fread" if reader == "data.table" else "vroom") in traceback
    assert result["samples"]["wall_s"] == [] and result["warmup_samples"]["wall_s"] == []
    assert any("compressed data" in w for w in result["warnings"])  # R's warning before the error is kept


def test_wrong_expected_dims_is_a_check_error(tmp_path, data_files):
    path = data_files[("fannie", "none")]
    proc, result = _run(
        tmp_path,
        _case(
            path, "fannie", reader="vroom", compression="none", threads=2, warmup=0, iterations=3, rows=FANNIE_ROWS + 1
        ),
    )
    assert proc.returncode == 0 and result is not None, proc.stderr
    _assert_result_shape(result)
    assert result["status"] == "error" and result["error"]["kind"] == "check"
    assert f"{FANNIE_ROWS} rows x {FANNIE_COLUMNS} columns, expected {FANNIE_ROWS + 1}" in result["error"]["message"]
    # the sample of the iteration that was checked is kept; the run stopped there
    assert len(result["samples"]["wall_s"]) == 1
    assert result["output"]["rows"] == FANNIE_ROWS


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"reader": "readr", "threads": 2}, "single-threaded"),
        ({"output": "arrow_table"}, "data frame"),
        ({"reader": "arrow"}, "not an R reader"),
        ({"compression": "zstd"}, "compression"),
        ({"batch_size": 1024}, "unknown param"),
        ({"benchmark": "csv-write"}, "not implemented"),
    ],
    ids=["readr-threads-2", "output-arrow", "reader-arrow", "compression-zstd", "unknown-param", "benchmark"],
)
def test_invalid_cases_are_invalid_error_results(tmp_path, data_files, change, expected):
    case = _case(data_files[("taxi", "none")], "taxi", reader="data.table", compression="none")
    for key, value in change.items():
        if key == "benchmark":
            case["benchmark"] = value
        else:
            case["params"][key] = value
            if key == "threads":
                case["threads"] = value
    proc, result = _run(tmp_path, case)
    assert proc.returncode == 0 and result is not None, proc.stderr
    _assert_result_shape(result)
    assert result["status"] == "error" and result["error"]["kind"] == "invalid"
    assert expected in result["error"]["message"]
    assert result["samples"]["wall_s"] == []


def test_unreadable_case_file_exits_non_zero_without_a_result(tmp_path):
    proc, result = _run(tmp_path, "{not json", name="broken")
    assert proc.returncode == 2 and result is None
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot read case file" in lines[0]

    result_path = tmp_path / "r.json"
    proc = subprocess.run(
        [RSCRIPT, str(WORKER), str(tmp_path / "absent.json"), str(result_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and not result_path.exists()
    assert proc.stderr.strip().count("\n") == 0 and "case file not found" in proc.stderr
