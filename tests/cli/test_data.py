"""`colbench data …` through Typer's runner (the integrator mounts ``data_app`` as ``colbench data``)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from colbench.cli.data_cmd import data_app

runner = CliRunner()


def test_list_shows_every_source_and_synthetic_set(root: Path) -> None:
    res = runner.invoke(data_app, ["list"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    for name in ("nyctaxi_2010-01", "fanniemae_2016Q4", "nyctaxi_2016-01", "nyctaxi_2016-06", "int64_frame",
                 "ipc_column", "vroom_numeric", "vroom_character"):
        assert name in res.output
    assert "not downloaded" in res.output and "ursa-qa.s3.amazonaws.com" in res.output


def test_make_list_cached_and_clean(root: Path) -> None:
    res = runner.invoke(data_app, ["make", "nyctaxi_2016-01", "--rows", "1000", "--seed", "3", "-o", "variant=cat",
                                   "--format", "parquet", "--codec", "zstd", "-o", "row_group_size=500"])
    assert res.exit_code == 0, res.output
    assert "1,000 rows × 20 columns" in res.output and "MB/s" in res.output
    again = runner.invoke(data_app, ["make", "nyctaxi_2016-01", "--rows", "1000", "--seed", "3", "-o", "variant=cat",
                                     "--format", "parquet", "--codec", "zstd", "-o", "row_group_size=500"])
    assert "already cached" in again.output
    listed = runner.invoke(data_app, ["list", "--cached"], env={"COLUMNS": "250"})
    assert listed.exit_code == 0 and "zstd" in listed.output and "variant=cat" in listed.output
    assert "3 files" in listed.output  # plain CSV, cat CSV, Parquet
    cleaned = runner.invoke(data_app, ["clean", "nyctaxi_2016-01"])
    assert cleaned.exit_code == 0 and "freed" in cleaned.output and not (root / "cache" / "nyctaxi_2016-01").exists()


def test_errors_are_one_line_and_exit_2(root: Path) -> None:
    res = runner.invoke(data_app, ["make", "nyctaxi_2010-01", "--rows", "10", "--format", "orc"])
    assert res.exit_code == 2 and "unknown format 'orc'" in res.output
    res = runner.invoke(data_app, ["make", "nyctaxi_2010-01", "--rows", "10", "-o", "oops"])
    assert res.exit_code == 2 and "key=value" in res.output


def test_make_verify_says_rebuilt_after_a_corrupt_file(root: Path) -> None:
    args = ["make", "vroom_numeric", "--rows", "200", "--format", "csv"]
    made = runner.invoke(data_app, args)
    assert made.exit_code == 0, made.output
    path = Path(made.output.split("\n")[0].strip())
    assert runner.invoke(data_app, [*args, "--verify"]).output.rstrip().endswith("(already cached, verified)")
    data = bytearray(path.read_bytes())
    data[-2:-1] = b"9" if data[-2:-1] != b"9" else b"8"  # same size, other bytes: only a re-hash sees it
    path.write_bytes(bytes(data))
    rebuilt = runner.invoke(data_app, [*args, "--verify"])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "already cached" not in rebuilt.output and "made in" in rebuilt.output
