"""Vectorised number and date formatting into Arrow string arrays.

The twins must reproduce how the original files *print* their values (the text layout is what a CSV reader
pays for): shortest round-trip decimals for most vendors, C's ``%.17g`` for others (``2.6000000000000001``),
fixed decimals (``1.10``, ``227977.44``), zero-padded dates. Python's ``'%.17g' % x`` runs at about a
million values a second, far too slow for tens of millions of fields, so everything here works on whole
numpy arrays and builds the Arrow string buffers directly.

The central trick is a character matrix: one row per value, one column per character slot, plus a mask
of the slots that belong to the value. ``matrix[mask]`` (row-major) is then exactly the concatenation of
all strings and ``mask.sum(axis=1)`` their lengths, which is what an Arrow string array is made of.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_ZERO = ord("0")


@functools.cache
def text_array(values: tuple[str, ...]) -> pa.StringArray:
    """A small constant string array, made on first use (any ``pa.array`` call makes pyarrow import pandas,
    seconds that ``import colbench.data`` should not cost)."""
    return pa.array(list(values), type=pa.string())
_POW10 = np.array([10**k for k in range(19)], dtype=np.uint64)
# Veltkamp's splitting constant 2**27 + 1: splits a double into two 26-bit halves whose products are exact.
_SPLIT = 134217729.0


def from_matrix(chars: np.ndarray, mask: np.ndarray) -> pa.StringArray:
    """Strings made of the masked characters of each row of ``chars`` (uint8, shape n × width)."""
    lengths = mask.sum(axis=1, dtype=np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.ascontiguousarray(chars[mask])
    if offsets[-1] >= 2**31:
        return pa.LargeStringArray.from_buffers(len(lengths), pa.py_buffer(offsets), pa.py_buffer(data))
    return pa.StringArray.from_buffers(len(lengths), pa.py_buffer(offsets.astype(np.int32)),
                                       pa.py_buffer(data))


_PAIRS = np.array([[48 + i // 10, 48 + i % 10] for i in range(100)], dtype=np.uint8)  # "00" … "99"


_PAIRS16 = _PAIRS.view("<u2").ravel()  # the same pairs as one little-endian uint16 each


def digits(values: np.ndarray, width: int) -> np.ndarray:
    """The last ``width`` decimal digits of non-negative integers as a (n, width) ASCII matrix.

    Two digits per division, written as one uint16 gathered from a table of the hundred pairs; 32-bit
    arithmetic when the values allow (numpy's 64-bit division is not vectorised).
    """
    v = np.asarray(values)
    small = len(v) == 0 or int(v.max()) < 2**32
    v = v.astype(np.uint32 if small else np.uint64)
    hundred = v.dtype.type(100)
    even = width + width % 2
    buf = np.empty((len(v), even), dtype=np.uint8)
    pairs = buf.view("<u2")
    for k in range(even // 2 - 1, -1, -1):
        q = v // hundred
        pairs[:, k] = _PAIRS16[v - q * hundred]
        v = q
    return buf[:, even - width:]


def integers(values: np.ndarray) -> pa.StringArray:
    """Integers as plain decimal strings (Arrow's own cast is exact and fast)."""
    return pa.array(np.asarray(values, dtype=np.int64)).cast(pa.string())


def shortest(values: np.ndarray) -> pa.StringArray:
    """Shortest round-trip decimal (``45``, ``4.5``, ``40.76775``), like most writers of the originals.

    Arrow's float-to-string cast already produces the shortest representation and prints integral values
    without a trailing ``.0``, which is what the taxi vendors' exports look like.
    """
    return pa.array(np.asarray(values, dtype=np.float64)).cast(pa.string())


def pandas_float(values: pa.Array | np.ndarray) -> pa.Array:
    """Floats as ``DataFrame.to_csv`` prints them: shortest repr, integral values with ``.0``.

    (Arrow and Python differ for magnitudes below 1e-4, which Arrow prints positionally; the taxi data has
    none.)
    """
    arr = values if isinstance(values, pa.Array) else pa.array(np.asarray(values, dtype=np.float64))
    text = arr.cast(pa.string())
    x = np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
    with np.errstate(invalid="ignore"):
        integral = np.isfinite(x) & (np.floor(x) == x) & (np.abs(x) < 1e16)
    if not integral.any():
        return text
    mask = pa.array(integral)
    return pc.replace_with_mask(text, mask, pc.binary_join_element_wise(text.filter(mask), ".0", ""))


def fixed(units: np.ndarray, decimals: int) -> pa.StringArray:
    """Integers counting 10**-decimals units as fixed-point text: ``110, 2`` → ``"1.10"``."""
    u = np.asarray(units, dtype=np.int64)
    neg = u < 0
    a = np.abs(u).astype(np.uint64)
    ndig = np.maximum(_num_digits(a), decimals + 1)
    width = int(ndig.max(initial=decimals + 1))
    mat = np.empty((len(a), width + 2), dtype=np.uint8)
    mat[:, 0] = ord("-")
    dig = digits(a, width)
    mat[:, 1:width - decimals + 1] = dig[:, :width - decimals]
    mat[:, width - decimals + 1] = ord(".")
    mat[:, width - decimals + 2:] = dig[:, width - decimals:]
    cols = np.arange(width + 2)
    first = width + 1 - ndig  # first digit column of each value
    mask = (cols[None, :] >= first[:, None]) | ((cols[None, :] == 0) & neg[:, None])
    if decimals == 0:
        mask[:, width + 1] = False
    return from_matrix(mat, mask)


def _num_digits(a: np.ndarray) -> np.ndarray:
    return np.maximum(np.searchsorted(_POW10, a, side="right"), 1)


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dekker's error-free product: a*b == p + e exactly (numpy has no fused multiply-add)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


def sig17(values: np.ndarray, ties: str = "even") -> pa.StringArray:
    """Exactly C's ``printf("%.17g", x)``: 17 significant digits, trailing zeros dropped.

    ``ties="even"`` rounds an exact tie at the 17th digit to even like glibc; ``ties="away"`` rounds it
    away from zero like the Microsoft C runtime that wrote the 2016 taxi files (``-73.990371704101563``
    where glibc prints ``…562``).

    Method: with ``q = 16 - floor(log10|x|)``, ``round(|x| * 10**q)`` is the 17-digit integer to print.
    ``10**q`` is an exact double for q ≤ 22 and Dekker's product gives ``|x| * 10**q`` exactly as
    ``p + e``; p is an integer (it is ≥ 2**53), so the rounding only has to look at e. Ties round to even
    like glibc. Values that ``%g`` would print in exponent notation (below 1e-4 or at least 1e17) and
    non-finite values go through Python's own formatting; there are none in the twins.
    """
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    ax = np.abs(x)
    special = ~np.isfinite(x) | ((ax < 1e-4) & (ax != 0)) | (ax >= 1e17)
    zero = ax == 0
    work = np.where(special | zero, 1.0, ax)
    e10 = np.floor(np.log10(work)).astype(np.int64)
    for _ in range(3):  # log10 can be off by one next to powers of ten: correct and recompute
        p, e = _two_product(work, 10.0 ** (16 - e10).astype(np.float64))
        low, high = p < 1e16, p >= 1e17
        if not (low.any() or high.any()):
            break
        e10 = e10 - low + high
    if ties == "away":
        whole = np.floor(e)
        up = whole + ((e - whole) >= 0.5)  # e - floor(e) is exact, so the tie test is too
    else:
        up = np.rint(e)
    big = p.astype(np.uint64) + up.astype(np.int64).astype(np.uint64)
    carry = big >= _POW10[17]  # rounding reached the next power of ten: one digit fewer after the point
    big = np.where(carry, _POW10[16], big)
    e10 = e10 + carry
    # Zeros and specials get a dummy 17-digit value so that every cast string has exactly 17 characters:
    # Arrow's integer-to-string cast is then a ready-made (n, 17) digit matrix.
    big[zero | special] = _POW10[16]
    e10[zero | special] = 0
    text = pa.array(big.view(np.int64)).cast(pa.string())
    dig = np.frombuffer(text.buffers()[2], dtype=np.uint8, count=17 * n).reshape(n, 17).copy()
    dig[zero | special, 0] = _ZERO
    # index of the last non-zero digit (0 for zero): %g does not print trailing zeros
    nz = dig != _ZERO
    last = 16 - np.argmax(nz[:, ::-1], axis=1)
    last[~nz.any(axis=1)] = 0
    # Layout (only the order of masked slots matters, so every assignment is a column slice):
    #   [-] [0] [.] [0] [0] [0]  d0 p0 d1 p1 ... p15 d16
    # The "0." lead and up to three zeros serve values below 1; p_j is a point slot after digit j.
    mat = np.empty((n, 6 + 33), dtype=np.uint8)
    mat[:, 0] = ord("-")
    mat[:, 1] = _ZERO
    mat[:, 2] = ord(".")
    mat[:, 3:6] = _ZERO
    mat[:, 6::2] = dig
    mat[:, 7::2] = ord(".")
    e = e10[:, None]
    j = np.arange(17)[None, :]
    mask = np.zeros((n, 39), dtype=bool)
    mask[:, 0] = np.signbit(x) & ~special
    below_one = e10 < 0
    mask[:, 1] = below_one
    mask[:, 2] = below_one
    mask[:, 3:6] = np.arange(3)[None, :] < (-e - 1)
    mask[:, 6::2] = j <= np.maximum(last, e10)[:, None]
    mask[:, 7::2] = (j[:, :16] == e) & (last > e10)[:, None]
    out = from_matrix(mat, mask)
    if special.any():
        idx = np.flatnonzero(special)
        fixes = pa.array([f"{v:.17g}" for v in x[idx]], type=pa.string())
        out = pc.replace_with_mask(out, pa.array(special), fixes)
    return out


@functools.cache
def _clock() -> np.ndarray:
    """``HH:MM:SS`` for every second of a day, as an (86400, 8) byte matrix."""
    tod = np.arange(86_400)
    mat = np.empty((86_400, 8), dtype=np.uint8)
    mat[:, 0:2] = _PAIRS[tod // 3600]
    mat[:, 3:5] = _PAIRS[tod // 60 % 60]
    mat[:, 6:8] = _PAIRS[tod % 60]
    mat[:, [2, 5]] = ord(":")
    return mat


def _dates(days: np.ndarray) -> np.ndarray:
    """``YYYY-MM-DD`` for day numbers since 1970, as a (n, 10) byte matrix."""
    d64 = days.astype("datetime64[D]")
    months = d64.astype("datetime64[M]")
    year = months.astype("datetime64[Y]").astype(np.int64) + 1970
    mat = np.empty((len(days), 10), dtype=np.uint8)
    mat[:, 0:4] = digits(year, 4)
    mat[:, 5:7] = _PAIRS[months.astype(np.int64) % 12 + 1]
    mat[:, 8:10] = _PAIRS[(d64 - months).astype(np.int64) + 1]
    mat[:, [4, 7]] = ord("-")
    return mat


def _fixed_width(mat: np.ndarray) -> pa.StringArray:
    n, width = mat.shape
    offsets = np.arange(0, (n + 1) * width, width, dtype=np.int64)
    data = pa.py_buffer(np.ascontiguousarray(mat))
    if offsets[-1] >= 2**31:
        return pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), data)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.astype(np.int32)), data)


def timestamps(seconds: np.ndarray) -> pa.StringArray:
    """Unix seconds as ``YYYY-MM-DD HH:MM:SS``.

    Gathered from a table of the days spanned and a table of the seconds of a day: several times faster
    than Arrow's timestamp-to-string cast, which dominated the taxi twins' generation time.
    """
    sec = np.asarray(seconds, dtype=np.int64)
    mat = np.empty((len(sec), 19), dtype=np.uint8)
    if len(sec):
        days = sec // 86_400
        first = int(days.min())
        mat[:, 0:10] = _dates(np.arange(first, int(days.max()) + 1))[days - first]
        mat[:, 10] = ord(" ")
        mat[:, 11:19] = _clock()[sec - days * 86_400]
    return _fixed_width(mat)


def month_day_year(year: np.ndarray, month: np.ndarray, day: np.ndarray | int) -> pa.StringArray:
    """``MM/DD/YYYY`` (Fannie Mae's reporting periods and event dates)."""
    n = len(year)
    mat = np.empty((n, 10), dtype=np.uint8)
    mat[:, 0:2] = digits(month, 2)
    mat[:, 2] = ord("/")
    mat[:, 3:5] = digits(np.broadcast_to(np.asarray(day), (n,)), 2)
    mat[:, 5] = ord("/")
    mat[:, 6:10] = digits(year, 4)
    return _fixed_width(mat)


def month_year(year: np.ndarray, month: np.ndarray) -> pa.StringArray:
    """``MM/YYYY`` (Fannie Mae's maturity and zero-balance dates)."""
    n = len(year)
    mat = np.empty((n, 7), dtype=np.uint8)
    mat[:, 0:2] = digits(month, 2)
    mat[:, 2] = ord("/")
    mat[:, 3:7] = digits(year, 4)
    return _fixed_width(mat)


class GridFormatter:
    """``%.17g`` for values on a decimal grid (cents, micro-degrees), through a lookup table.

    Building the table costs one ``sig17`` call over the grid range, so it pays off once a generator has
    formatted more values than the table holds; until then (small twins) values are formatted directly.
    The table is built once per process and shared by all chunks and files.
    """

    def __init__(self, decimals: int, lo: int, hi: int) -> None:
        self.scale = 10**decimals
        self.lo, self.hi = lo, hi
        self._table: pa.StringArray | None = None
        self._seen = 0

    def __call__(self, units: np.ndarray) -> pa.Array:
        units = np.asarray(units, dtype=np.int64)
        self._seen += len(units)
        inside = (units >= self.lo) & (units <= self.hi)
        if self._table is None and self._seen < (self.hi - self.lo) // 2:
            return sig17(units / self.scale)
        if self._table is None:
            self._table = sig17(np.arange(self.lo, self.hi + 1, dtype=np.int64) / self.scale)
        if inside.all():
            return self._table.take(pa.array(units - self.lo))
        out = self._table.take(pa.array(np.where(inside, units - self.lo, 0)))
        return pc.replace_with_mask(out, pa.array(~inside), sig17(units[~inside] / self.scale))


class DecimalTable:
    """Shortest decimal text of ``units / 10**decimals`` on a grid, through a lookup table.

    Arrow's float-to-string cast costs about 100 ns a value; a ``take`` from a table of the grid's strings
    a third of that. Values outside the table are cast directly.
    """

    def __init__(self, decimals: int, lo: int, hi: int) -> None:
        self.scale = 10**decimals
        self.lo, self.hi = lo, hi
        self._table: pa.StringArray | None = None

    def __call__(self, units: np.ndarray) -> pa.Array:
        units = np.asarray(units, dtype=np.int64)
        if len(units) < (self.hi - self.lo) // 8 and self._table is None:
            return shortest(units / self.scale)
        if self._table is None:
            self._table = shortest(np.arange(self.lo, self.hi + 1, dtype=np.int64) / self.scale)
        inside = (units >= self.lo) & (units <= self.hi)
        if inside.all():
            return self._table.take(pa.array(units - self.lo))
        out = self._table.take(pa.array(np.where(inside, units - self.lo, 0)))
        return pc.replace_with_mask(out, pa.array(~inside), shortest(units[~inside] / self.scale))


class Float32Formatter:
    """``%.17g`` of float32 values widened to double (the 2016 taxi coordinates), via a table over a range.

    Float32 values of one sign are ordered like their bit patterns, so a value's table slot is its bit
    pattern minus the pattern of the range start; a taxi coordinate box holds only ~10**5 of them.
    """

    def __init__(self, lo: float, hi: float, ties: str = "even") -> None:
        bits = np.array([lo, hi], dtype=np.float32).view(np.int32)
        self.sign = np.signbit(np.float32(lo))
        self.lo_bits, self.hi_bits = int(bits.min()), int(bits.max())
        self.ties = ties
        self._table: pa.StringArray | None = None

    def __call__(self, values: np.ndarray) -> pa.Array:
        v32 = np.asarray(values, dtype=np.float32)
        bits = v32.view(np.int32).astype(np.int64)
        inside = (bits >= self.lo_bits) & (bits <= self.hi_bits) & (np.signbit(v32) == self.sign)
        if self._table is None and len(v32) < (self.hi_bits - self.lo_bits) // 4:
            return sig17(v32.astype(np.float64), self.ties)
        if self._table is None:
            grid = np.arange(self.lo_bits, self.hi_bits + 1, dtype=np.int64).astype(np.int32)
            self._table = sig17(grid.view(np.float32).astype(np.float64), self.ties)
        out = self._table.take(pa.array(np.where(inside, bits - self.lo_bits, 0)))
        if inside.all():
            return out
        return pc.replace_with_mask(out, pa.array(~inside), sig17(v32[~inside].astype(np.float64), self.ties))
