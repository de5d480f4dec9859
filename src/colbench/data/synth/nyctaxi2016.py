"""Twins of ``nyctaxi_2016-01`` … ``nyctaxi_2016-06``: the yellow taxi months of the DSIB baseline (E2).

The TLC layout of 2016: 19 columns, a header, CRLF line ends; VendorID 1/2; timestamps to the second;
trip_distance with two fixed decimals (``1.10``); coordinates stored as float32 by the TLC and printed
with 17 significant digits, ties rounded away from zero (``-73.990371704101563``); money as plain
decimals on the 2016 meter (50-cent steps, JFK flat 52); ``improvement_surcharge`` 0.3 since 2015;
``store_and_fwd_flag`` ``Y``/``N``; ``total_amount`` exactly the sum of its parts.

Each month is its own generator (its own random stream and calendar). The DSIB ``str``/``cat``
variants are derived from this plain text by :mod:`colbench.data.variants`, for the real months too.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from colbench.data import textfmt
from colbench.data.columns import TAXI_2016_COLUMNS
from colbench.data.synth.base import Generator, GenOptions, TextLayout
from colbench.data.textfmt import text_array as _text

COLUMNS = TAXI_2016_COLUMNS  # written down once, in the source registry

PASSENGERS = (np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]),
              (0.0004, 0.70, 0.142, 0.041, 0.02, 0.057, 0.0395, 0.0001, 0.00005, 0.00005))
RATE_CODES = (np.array([1, 2, 3, 4, 5, 6, 99]), (0.9725, 0.022, 0.0019, 0.0005, 0.0031, 0.00001, 0.00001))
PAYMENTS = (np.array([1, 2, 3, 4, 5, 6]), (0.633, 0.358, 0.0065, 0.0025, 0.00001, 0.00001))
FLAGS = ("N", "Y")
DIURNAL = np.array([3.5, 2.6, 1.9, 1.4, 1.0, 0.9, 1.9, 3.5, 4.4, 4.4, 4.3, 4.4, 4.7, 4.7, 4.9, 4.8, 4.3,
                    5.0, 6.1, 6.4, 6.0, 5.8, 5.7, 5.0])
DIURNAL = DIURNAL / DIURNAL.sum()
LON_BOX = (-74.3, -73.6)
LAT_BOX = (40.5, 41.0)
# rows of the real months, for "full scale" (only January's is in the reference)
ROWS_2016_01 = 10_906_858

_LON = textfmt.Float32Formatter(*LON_BOX, ties="away")
_LAT = textfmt.Float32Formatter(*LAT_BOX, ties="away")
_MONEY = textfmt.DecimalTable(2, 0, 200_000)


def _choice(rng: np.random.Generator, values: np.ndarray, shares: Any, n: int) -> np.ndarray:
    p = np.asarray(shares, dtype=float)
    return values[rng.choice(len(p), n, p=p / p.sum())]


class NycTaxi2016(Generator):
    kind: str = "text"
    version: str = "1"

    def __init__(self, month: int) -> None:
        self.month = month
        self.name = f"nyctaxi_2016-{month:02d}"
        self.description = f"NYC yellow taxi trips, {2016}-{month:02d} (DSIB baseline E2)"
        self.full_rows = ROWS_2016_01 if month == 1 else None
        start = np.datetime64(f"2016-{month:02d}-01T00:00:00", "s")
        end = np.datetime64(f"2016-{month + 1:02d}-01" if month < 12 else "2017-01-01", "D")
        self.start = int(start.astype(np.int64))
        self.days = int((end - start.astype("datetime64[D]")).astype(np.int64))

    def layout(self, options: GenOptions) -> TextLayout:
        return TextLayout(delimiter=",", header=True, line_terminator="\r\n", column_names=COLUMNS)

    def tables(self, rows: int, seed: int, options: GenOptions) -> Iterator[pa.Table]:
        for k, _start, n in self.chunk_sizes(rows):
            yield self._chunk(self.rng(seed, k), n)

    def _chunk(self, rng: np.random.Generator, n: int) -> pa.Table:
        vendor = rng.choice(np.array([1, 2]), n, p=(0.46, 0.54))
        day = rng.integers(0, self.days, n)
        hour = rng.choice(24, n, p=DIURNAL)
        pickup = self.start + day * 86_400 + hour * 3_600 + rng.integers(0, 3_600, n)

        miles = np.clip(rng.lognormal(0.5, 0.85, n), 0.01, 99.0)
        hundredths = np.rint(miles * 100).astype(np.int64)
        hundredths[rng.random(n) < 0.006] = 0
        speed = np.clip(rng.lognormal(2.3, 0.38, n), 2.0, 45.0)
        duration = np.rint(hundredths / 100 / speed * 3600 + rng.integers(30, 240, n)).astype(np.int64)
        dropoff = pickup + duration

        plon = rng.normal(-73.978, 0.03, n)
        plat = rng.normal(40.752, 0.03, n)
        angle = rng.uniform(0, 2 * np.pi, n)
        reach = hundredths / 100 / 69.0 * rng.uniform(0.55, 0.95, n)
        dlon = plon + reach * np.cos(angle) / 0.757
        dlat = plat + reach * np.sin(angle)
        coords = [np.clip(plon, *LON_BOX), np.clip(plat, *LAT_BOX), np.clip(dlon, *LON_BOX),
                  np.clip(dlat, *LAT_BOX)]
        for lon, lat in ((0, 1), (2, 3)):
            zero = rng.random(n) < 0.016
            coords[lon][zero] = 0
            coords[lat][zero] = 0

        rate = _choice(rng, *RATE_CODES, n)
        payment = _choice(rng, *PAYMENTS, n)
        waiting = rng.poisson(duration / 60 * 0.3)
        fare = 250 + 50 * np.ceil(hundredths / 20).astype(np.int64) + 50 * waiting
        fare = np.where(rate == 2, 5200, fare)
        fare = np.where(rate >= 3, fare * 2, fare)
        fare = np.minimum(fare, 150_000)
        hod = ((pickup - self.start) // 3600) % 24
        dow = ((pickup // 86_400) + 3) % 7  # 1970-01-01 was a Thursday (0 = Monday)
        extra = np.where((hod >= 20) | (hod < 6), 50, 0)
        extra = np.where((dow < 5) & (hod >= 16) & (hod < 20), 100, extra)
        mta_tax = np.where(rng.random(n) < 0.995, 50, 0)
        tip = np.where((payment == 1) & (rng.random(n) < 0.93),
                       np.rint(fare * rng.uniform(0.12, 0.28, n)).astype(np.int64), 0)
        tolls = np.where(rng.random(n) < 0.05, _choice(rng, np.array([554, 1108, 1000, 250]),
                                                        (0.8, 0.08, 0.07, 0.05), n), 0)
        improvement = np.where(rng.random(n) < 0.9995, 30, 0)
        total = fare + extra + mta_tax + tip + tolls + improvement
        flag = (rng.random(n) < 0.005).astype(np.int64)

        return pa.table({
            "VendorID": pa.array(vendor),
            "tpep_pickup_datetime": textfmt.timestamps(pickup),
            "tpep_dropoff_datetime": textfmt.timestamps(dropoff),
            "passenger_count": pa.array(_choice(rng, *PASSENGERS, n)),
            "trip_distance": textfmt.fixed(hundredths, 2),
            "pickup_longitude": _LON(coords[0]),
            "pickup_latitude": _LAT(coords[1]),
            "RatecodeID": pa.array(rate),
            "store_and_fwd_flag": _text(FLAGS).take(pa.array(flag)),
            "dropoff_longitude": _LON(coords[2]),
            "dropoff_latitude": _LAT(coords[3]),
            "payment_type": pa.array(payment),
            "fare_amount": _MONEY(fare),
            "extra": _MONEY(extra),
            "mta_tax": _MONEY(mta_tax),
            "tip_amount": _MONEY(tip),
            "tolls_amount": _MONEY(tolls),
            "improvement_surcharge": _MONEY(improvement),
            "total_amount": _MONEY(total),
        })
