"""Twin of ``nyctaxi_2010-01``: NYC yellow taxi trips of January 2010 as the TLC published them.

What it reproduces (the NYC taxi 2010-01 file of E1 and E5): 18 columns, a header line followed by one
blank line, CRLF line ends; vendors VTS 59 % / CMT 29 % / DDS 12 %; VTS timestamps on whole minutes, the
others to the second; vendor-specific payment spellings (``CAS``/``CRE`` vs ``Cas``/``Cre``/``No ``);
``store_and_fwd_flag`` empty except ``0``/``1`` for CMT and one ``*`` in the whole file (which makes
pyarrow infer a string column, as on the real file), placed where data.table's ``fread`` does not see it when
it guesses types (see ``star_row``); about 2 % of coordinates exactly 0; fares on the 2010
meter (multiples of 10 cents, JFK flat 45); ``total_amount`` is exactly the sum of the parts (computed in
cents). Coordinates and distances are printed with C's ``%.17g`` (``40.767749999999999``,
``2.6000000000000001``), the money columns as plain decimals (``17.7``, ``5``): that split is what makes
the published 2.54 GB for 14.86 M rows (≈ 171 bytes a row); printing everything one way or the other
gives ≈ 120 or ≈ 185.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from colbench.data import textfmt
from colbench.data.columns import TAXI_2010_COLUMNS
from colbench.data.synth.base import Generator, GenOptions, TextLayout
from colbench.data.textfmt import text_array as _text

COLUMNS = TAXI_2010_COLUMNS  # written down once, in the source registry

VTS, CMT, DDS = 0, 1, 2
VENDORS = ("VTS", "CMT", "DDS")
VENDOR_SHARE = (0.59, 0.29, 0.12)
# payment spellings per vendor: (spellings, shares); the first is cash, the second credit
SPELLINGS = ("CAS", "CRE", "Cas", "Cre", "No ", "Dis")
PAYMENTS = {  # vendor: (indices into SPELLINGS, shares)
    VTS: ((0, 1), (0.69, 0.31)),
    CMT: ((2, 3, 4, 5), (0.695, 0.295, 0.007, 0.003)),
    DDS: ((0, 1), (0.76, 0.24)),
}
FLAGS = ("0", "1", "*")
PASSENGERS = (np.arange(1, 7), (0.69, 0.15, 0.04, 0.02, 0.08, 0.02))
RATE_CODES = (np.array([1, 2, 3, 4, 5, 6]), (0.979, 0.013, 0.002, 0.002, 0.003, 0.001))
# trips by hour of day (share), from a typical weekday profile of the TLC data
DIURNAL = np.array([3.9, 2.9, 2.2, 1.6, 1.2, 0.9, 1.8, 3.4, 4.4, 4.5, 4.3, 4.4, 4.7, 4.7, 4.9, 4.8, 4.3,
                    5.0, 6.0, 6.4, 6.1, 5.8, 5.7, 5.2])
DIURNAL = DIURNAL / DIURNAL.sum()
JAN_2010 = int(np.datetime64("2010-01-01T00:00:00", "s").astype(np.int64))
# NYC box for coordinates, in micro-degrees (the real file has a few far outliers; not reproduced)
LON_BOX = (-74_300_000, -73_600_000)
LAT_BOX = (40_500_000, 41_000_000)
TOLLS = (np.array([457, 500, 914, 480, 250, 1000]), (0.55, 0.2, 0.08, 0.07, 0.05, 0.05))

# %.17g lookup tables, shared by all chunks of the process
_HUNDREDTHS = textfmt.GridFormatter(2, 0, 10_000)
_LON = textfmt.GridFormatter(6, *LON_BOX)
_LAT = textfmt.GridFormatter(6, *LAT_BOX)


def star_row(rows: int) -> int:
    """The row of the file's one ``*`` flag: 0.375 of the way in, between two of fread's type-detection jumps.

    fread guesses column types from 100 lines at each of 101 evenly spaced byte offsets (jump points
    0, 1/100, …, 1). On the real file those 10,100 lines are 0.07 % of its 14.86 M rows, so fread almost surely
    reads the flag column as integers, meets the ``*`` mid-file, bumps the column to character and reads it
    again: a cost the post's fread paid. Halfway between jumps 37 and 38 the twin pays it too at every size
    from ~30k rows up (at ``rows // 2``, the twin's old place, the ``*`` fell inside jump 50's lines at 100k and
    2M rows but not at 500k, so fread's time jumped with the size).
    """
    return rows * 3 // 8


def _choice(rng: np.random.Generator, values: Any, shares: Any, n: int) -> np.ndarray:
    return np.asarray(values)[rng.choice(len(shares), n, p=np.asarray(shares) / np.sum(shares))]


def _coords(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Pickup points in micro-degrees: dense Manhattan core, wider ring, airports."""
    part = rng.choice(3, n, p=(0.80, 0.17, 0.03))
    lon = np.where(part == 0, rng.normal(-73.982, 0.018, n), rng.normal(-73.95, 0.06, n))
    lat = np.where(part == 0, rng.normal(40.755, 0.022, n), rng.normal(40.74, 0.06, n))
    lon = np.where(part == 2, rng.normal(-73.79, 0.01, n), lon)  # JFK
    lat = np.where(part == 2, rng.normal(40.645, 0.006, n), lat)
    lon_u = np.clip(np.rint(lon * 1e6).astype(np.int64), *LON_BOX)
    lat_u = np.clip(np.rint(lat * 1e6).astype(np.int64), *LAT_BOX)
    return lon_u, lat_u


_MONEY = textfmt.DecimalTable(2, 0, 200_000)


def _money(cents: np.ndarray) -> pa.Array:
    return _MONEY(cents)


class NycTaxi2010(Generator):
    name: str = "nyctaxi_2010-01"
    version: str = "2"  # 2: the `*` flag moved out of fread's type-detection sample
    kind: str = "text"
    description: str = "NYC yellow taxi trips, January 2010 (arrowbench E1, Feather V2 post E5)"
    full_rows: int | None = 14_863_778

    def layout(self, options: GenOptions) -> TextLayout:
        return TextLayout(delimiter=",", header=True, blank_line_after_header=True, line_terminator="\r\n",
                          column_names=COLUMNS)

    def tables(self, rows: int, seed: int, options: GenOptions) -> Iterator[pa.Table]:
        star = star_row(rows)  # the real file has exactly one "*" flag
        for k, start, n in self.chunk_sizes(rows):
            yield self._chunk(self.rng(seed, k), n, star - start)

    def _chunk(self, rng: np.random.Generator, n: int, star: int) -> pa.Table:
        vendor = rng.choice(3, n, p=VENDOR_SHARE)
        cmt = vendor == CMT
        vts = vendor == VTS

        # --- when: a month of trips with a diurnal profile; VTS recorded whole minutes only
        day = rng.integers(0, 31, n)
        hour = rng.choice(24, n, p=DIURNAL)
        pickup = JAN_2010 + day * 86_400 + hour * 3_600 + rng.integers(0, 3_600, n)

        # --- how far and how long: log-normal distances (mean ≈ 2.6 mi), speeds around 11 mph
        miles = rng.lognormal(0.62, 0.82, n)
        miles = np.clip(miles, 0.01, 99.0)
        hundredths = np.rint(miles * 100).astype(np.int64)
        tenths = np.rint(miles * 10).astype(np.int64) * 10  # CMT and DDS meters show tenths of a mile
        hundredths = np.where(vts, hundredths, tenths)
        hundredths[rng.random(n) < 0.006] = 0  # cancelled / no-move trips
        speed = np.clip(rng.lognormal(2.35, 0.38, n), 2.0, 45.0)
        duration = np.rint(hundredths / 100 / speed * 3600 + rng.integers(30, 240, n)).astype(np.int64)
        dropoff = pickup + duration
        pickup = np.where(vts, pickup - pickup % 60, pickup)
        dropoff = np.where(vts, dropoff - dropoff % 60, dropoff)
        dropoff = np.maximum(dropoff, pickup)

        # --- where: pickups around Manhattan, drop-offs displaced by the distance; 2 % exact zeros
        plon, plat = _coords(rng, n)
        angle = rng.uniform(0, 2 * np.pi, n)
        reach = hundredths / 100 / 69.0 * 1e6 * rng.uniform(0.55, 0.95, n)  # degrees, streets not crow
        dlon = np.clip(plon + np.rint(reach * np.cos(angle) / 0.757).astype(np.int64), *LON_BOX)
        dlat = np.clip(plat + np.rint(reach * np.sin(angle)).astype(np.int64), *LAT_BOX)
        for lon, lat in ((plon, plat), (dlon, dlat)):
            zero = rng.random(n) < 0.02
            lon[zero] = 0
            lat[zero] = 0

        # --- what: rate codes, payment spellings, the 2010 meter and surcharges, all in cents
        rate = _choice(rng, *RATE_CODES, n)
        pay = np.zeros(n, dtype=np.int64)
        credit = np.zeros(n, dtype=bool)
        for v, (spellings, shares) in PAYMENTS.items():
            sel = vendor == v
            idx = rng.choice(len(shares), int(sel.sum()), p=shares)
            pay[sel] = np.asarray(spellings)[idx]
            credit[sel] = idx == 1
        waiting = rng.poisson(duration / 60 * 0.35)
        fare = 250 + 40 * np.ceil(hundredths / 20).astype(np.int64) + 40 * waiting
        fare = np.where(rate == 2, 4500, fare)  # JFK flat fare
        fare = np.where(rate >= 3, fare * 2, fare)  # out-of-city meters: double fare
        fare = np.minimum(fare, 150_000)
        hod = ((pickup - JAN_2010) // 3600) % 24
        dow = ((pickup - JAN_2010) // 86_400 + 4) % 7  # 2010-01-01 was a Friday (0 = Monday)
        surcharge = np.where((hod >= 20) | (hod < 6), 50, 0)
        surcharge = np.where((dow < 5) & (hod >= 16) & (hod < 20), 100, surcharge)
        mta_tax = np.where(rng.random(n) < 0.994, 50, 0)
        tip = np.where(credit & (rng.random(n) < 0.9),
                       np.rint(fare * rng.uniform(0.10, 0.25, n)).astype(np.int64), 0)
        tolls = np.where(rng.random(n) < 0.032, _choice(rng, *TOLLS, n), 0)
        total = fare + surcharge + mta_tax + tip + tolls

        flag = (rng.random(n) >= 0.992).astype(np.int64)  # CMT: "0", rarely "1"; others: empty
        no_flag = ~cmt
        if 0 <= star < n:
            flag[star], no_flag[star] = 2, False
        flags = _text(FLAGS).take(pa.array(flag, mask=no_flag))

        cols = {
            "vendor_id": _text(VENDORS).take(pa.array(vendor)),
            "pickup_datetime": textfmt.timestamps(pickup),
            "dropoff_datetime": textfmt.timestamps(dropoff),
            "passenger_count": pa.array(_choice(rng, *PASSENGERS, n)),
            "trip_distance": _HUNDREDTHS(hundredths),
            "pickup_longitude": _LON(plon),
            "pickup_latitude": _LAT(plat),
            "rate_code": pa.array(rate),
            "store_and_fwd_flag": flags,
            "dropoff_longitude": _LON(dlon),
            "dropoff_latitude": _LAT(dlat),
            "payment_type": _text(SPELLINGS).take(pa.array(pay)),
            "fare_amount": _money(fare),
            "surcharge": _money(surcharge),
            "mta_tax": _money(mta_tax),
            "tip_amount": _money(tip),
            "tolls_amount": _money(tolls),
            "total_amount": _money(total),
        }
        return pa.table(cols)
