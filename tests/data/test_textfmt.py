"""The vectorised formatters print exactly what C / Python / pandas print."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Context, Decimal

import numpy as np
import pyarrow as pa

from colbench.data import textfmt


def _values(rng: np.random.Generator) -> np.ndarray:
    return np.concatenate([
        rng.integers(0, 100_000, 5_000) / 100,  # money on a cent grid
        -73.9 + rng.integers(-300_000, 300_000, 5_000) / 1e6,  # coordinates on a micro-degree grid
        rng.random(2_000) * 1000, rng.random(1_000) * 1e16, rng.random(1_000) * 1e-3,
        np.float32(rng.uniform(-74.3, 40.9, 3_000)).astype(np.float64),
        [0.0, -0.0, 1.0, 10.0, 99.99999999999999, 9.999999999999999e16, 1e-5, 1e-4, 1e17, 2.5, 0.5, -1e-7],
    ])


def test_sig17_is_printf_17g() -> None:
    x = _values(np.random.default_rng(7))
    assert textfmt.sig17(x).to_pylist() == [f"{v:.17g}" for v in x]


def test_sig17_ties_away_from_zero() -> None:
    # float32 values widened to double often end in an exact 5 at the 18th digit
    x = np.float32(np.random.default_rng(3).uniform(-74.3, -73.6, 5_000)).astype(np.float64)
    ctx = Context(prec=17, rounding=ROUND_HALF_UP)
    want = []
    for v in x:
        text = format(ctx.plus(Decimal(float(v))), "f")
        want.append(text.rstrip("0").rstrip(".") if "." in text else text)
    assert textfmt.sig17(x, ties="away").to_pylist() == want
    assert textfmt.sig17(np.array([np.float32(-73.990371704101563)], dtype=float), "away").to_pylist() == [
        "-73.990371704101563"]  # the first row of yellow_tripdata_2016-01.csv


def test_lookup_formatters_match_direct_formatting() -> None:
    rng = np.random.default_rng(1)
    grid = textfmt.GridFormatter(6, -74_300_000, -73_600_000)
    units = np.concatenate([rng.integers(-74_300_000, -73_600_000, 400_000), [0, 5, -75_000_000]])
    assert grid(units).to_pylist()[-1000:] == textfmt.sig17(units / 1e6).to_pylist()[-1000:]
    f32 = textfmt.Float32Formatter(40.5, 41.0, ties="away")
    values = np.concatenate([rng.uniform(40.5, 41.0, 300_000), [0.0, 39.0]]).astype(np.float32)
    assert f32(values).to_pylist()[-500:] == textfmt.sig17(values.astype(float), "away").to_pylist()[-500:]
    table = textfmt.DecimalTable(2, 0, 1000)
    cents = np.arange(0, 3000)
    assert table(cents).to_pylist() == textfmt.shortest(cents / 100).to_pylist()


def test_fixed_shortest_pandas_and_dates() -> None:
    assert textfmt.fixed(np.array([110, 5, 0, -5, 22797744]), 2).to_pylist() == [
        "1.10", "0.05", "0.00", "-0.05", "227977.44"]
    assert textfmt.shortest(np.array([45.0, 4.5, 40.76775, 0.0])).to_pylist() == ["45", "4.5", "40.76775", "0"]
    assert textfmt.pandas_float(np.array([0.0, 1.5, -73.99037170410156])).to_pylist() == [
        "0.0", "1.5", "-73.99037170410156"]
    secs = np.array([0, 1264491660, 951868799, 4102444799])
    assert textfmt.timestamps(secs).to_pylist() == pa.array(secs.astype("datetime64[s]")).cast(pa.string()).to_pylist()
    assert textfmt.month_day_year(np.array([2016]), np.array([3]), 1).to_pylist() == ["03/01/2016"]
    assert textfmt.month_year(np.array([2046]), np.array([11])).to_pylist() == ["11/2046"]
