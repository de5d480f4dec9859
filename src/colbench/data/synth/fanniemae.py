"""Twin of ``fanniemae_2016Q4``: Fannie Mae single-family loan performance, loans acquired in 2016 Q4.

What it reproduces (the Fannie Mae 2016Q4 loan performance file of E1 and E5): no header, ``|`` delimiter, LF line ends,
31 columns; one row per loan and month (≈ 36 a loan: reporting runs to mid-2020 unless the loan pays
off first), rows grouped by loan in ascending 12-digit LOAN_ID order; balances that amortise on the loan's
own rate and term and are empty in the loan's first six months; LOAN_AGE / REM_MONTHS / ADJ_REM_MONTHS
counting along; SERVICER only on a loan's first row (and rare transfers); DLQ_STATUS mostly ``0`` with
some ``1`` and rare ``X``; a Zero_Bal_Code on the last row of loans that paid off or were disposed of;
the four event dates and ten cost/proceeds columns filled only for disposed loans; MI_CANCEL_FLAG and
LOAN_HOLDBACK_INDICATOR entirely empty; RELOCATION_MORTGAGE_INDICATOR and SERV_IND ``N``.

The second loan of every file is a foreclosed and disposed loan, so that even a few hundred rows carry
values in the otherwise almost empty columns and pyarrow infers the same types as on the real file.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from colbench.data import textfmt
from colbench.data.columns import FANNIE_COLUMNS
from colbench.data.synth.base import Generator, GenOptions, TextLayout
from colbench.data.textfmt import text_array as _text

COLUMNS = FANNIE_COLUMNS  # the registry in sources.py is the one place the layout is written down
COST_COLUMNS = COLUMNS[17:27]

SERVICERS = (
    "OTHER", "WELLS FARGO BANK, N.A.", "QUICKEN LOANS INC.", "JPMORGAN CHASE BANK, NATIONAL ASSOCIATION",
    "PENNYMAC CORP.", "FREEDOM MORTGAGE CORP.", "NATIONSTAR MORTGAGE, LLC", "LAKEVIEW LOAN SERVICING, LLC",
    "SUNTRUST MORTGAGE INC.", "U.S. BANK N.A.", "MATRIX FINANCIAL SERVICES CORPORATION",
    "FLAGSTAR BANK, FSB",
)
SERVICER_SHARE = np.array([40, 15, 10, 5, 5, 4, 4, 4, 3, 4, 3, 3], dtype=float)
MSAS = ("00000", "35620", "31080", "16980", "19100", "26420", "47900", "33100", "37980", "12060",
                 "38060", "14460", "41860", "40140", "19820", "42660", "33460", "41740", "45300", "19740")
MSA_SHARE = np.array([12, 9, 7, 5, 5, 4, 5, 3, 4, 4, 4, 3, 4, 3, 2, 4, 4, 3, 3, 4], dtype=float)
RATES_EIGHTHS = np.arange(24, 41)  # 3.000 % … 5.000 % in eighths of a percent
RATE_SHARE = np.exp(-0.5 * ((RATES_EIGHTHS - 30.0) / 2.2) ** 2)
DLQ = ("0", "1", "2", "3", "4", "5", "6", "X")
ZB_CODES = ("01", "03", "09")  # prepaid, short sale, deed / REO disposition
CUTOFF = 2020 * 12 + 5  # last reporting period, June 2020 (months since year 0)
FIRST_ORIG = 2016 * 12 + 6  # originations July … December 2016
PREPAY_HAZARD = 0.0090  # monthly; with the cutoff this gives ≈ 36 rows a loan
DEFAULT_HAZARD = 0.0004
FORCED_DEFAULT = 1  # index of the loan that is always disposed of (see module docstring)

_FIRST_MONTH = 2000 * 12


@functools.cache
def _tables() -> dict[str, pa.Array]:
    """Month index → text, rates in eighths of a percent → text; built once, on first use."""
    months = np.arange(_FIRST_MONTH, 2070 * 12)
    return {"mdy": textfmt.month_day_year(months // 12, months % 12 + 1, 1),
            "my": textfmt.month_year(months // 12, months % 12 + 1),
            "rate": textfmt.shortest(np.arange(0, 41) / 8)}


def _month_text(kind: str, months: np.ndarray, valid: np.ndarray | None = None) -> pa.Array:
    return _tables()[kind].take(pa.array(months - _FIRST_MONTH, mask=None if valid is None else ~valid))


@dataclass
class Loans:
    """Loan-level attributes for a whole file (small: one entry per ≈ 36 rows)."""

    loan_id: np.ndarray
    length: np.ndarray  # rows in the file
    first_period: np.ndarray  # month index of the first row
    age0: np.ndarray  # LOAN_AGE on the first row
    term: np.ndarray
    rate8: np.ndarray  # rate in eighths of a percent
    upb_cents: np.ndarray  # original balance
    msa: np.ndarray
    servicer: np.ndarray
    fate: np.ndarray  # 0 active at cutoff, 1 prepaid, 2 disposed after default
    curtail: np.ndarray  # months the borrower is ahead (ADJ_REM_MONTHS), per row of age


def draw_loans(rng: np.random.Generator, rows: int) -> Loans:
    """Loans until ``rows`` rows are covered; the last one is cut where the file ends."""
    n = max(1, int(rows / 30) + 16)  # a few more than needed, trimmed below
    while True:
        orig = FIRST_ORIG + rng.choice(6, n, p=(0.08, 0.12, 0.2, 0.24, 0.22, 0.14))
        age0 = rng.choice(4, n, p=(0.25, 0.45, 0.2, 0.1))
        first = orig + age0
        natural = CUTOFF - first + 1
        prepay_at = rng.geometric(PREPAY_HAZARD, n)
        default_at = rng.geometric(DEFAULT_HAZARD, n) + 8  # a default takes months to resolve
        if n > FORCED_DEFAULT:
            default_at[FORCED_DEFAULT] = min(12, int(natural[FORCED_DEFAULT]))
            prepay_at[FORCED_DEFAULT] = 10**6
        fate = np.zeros(n, dtype=np.int64)
        length = natural.copy()
        paid = (prepay_at < length) & (prepay_at < default_at)
        fate[paid], length[paid] = 1, prepay_at[paid]
        dead = (default_at <= length) & ~paid
        fate[dead], length[dead] = 2, default_at[dead]
        total = np.cumsum(length)
        if total[-1] >= rows:
            break
        n = int(n * 1.3) + 16
    keep = int(np.searchsorted(total, rows)) + 1
    length = length[:keep].copy()
    length[-1] -= int(total[keep - 1] - rows)
    # ascending 12-digit ids: random gaps that can never sum past 999999999999
    loan_id = 100_000_000_000 + np.cumsum(rng.integers(1, 899_999_999_999 // (keep + 1) + 1, keep))
    term = np.where(rng.random(keep) < 0.16, 180, 360)
    upb = np.clip(np.rint(rng.lognormal(np.log(215_000), 0.48, keep) / 1000) * 1000, 20_000, 1_200_000)
    curtail = np.where(rng.random(keep) < 0.18, rng.uniform(0.03, 0.6, keep), 0.0)
    return Loans(
        loan_id=loan_id, length=length, first_period=first[:keep], age0=age0[:keep], term=term,
        rate8=rng.choice(RATES_EIGHTHS, keep, p=RATE_SHARE / RATE_SHARE.sum()),
        upb_cents=(upb * 100).astype(np.int64),
        msa=rng.choice(len(MSA_SHARE), keep, p=MSA_SHARE / MSA_SHARE.sum()),
        servicer=rng.choice(len(SERVICER_SHARE), keep, p=SERVICER_SHARE / SERVICER_SHARE.sum()),
        fate=fate[:keep], curtail=curtail,
    )


def _cents_or_null(cents: np.ndarray, valid: np.ndarray) -> pa.Array:
    """Fixed two-decimal text where ``valid``, null (an empty field) elsewhere; formats only valid rows."""
    if valid.all():
        return textfmt.fixed(cents, 2)
    text = textfmt.fixed(cents[valid], 2)
    return text.take(pa.array(np.cumsum(valid) - 1, mask=~valid))


class FannieMae2016Q4(Generator):
    name: str = "fanniemae_2016Q4"
    version: str = "1"
    kind: str = "text"
    description: str = "Fannie Mae loan performance, 2016 Q4 acquisitions (arrowbench E1, E5)"
    full_rows: int | None = 22_180_168
    loans_per_chunk: int = 4_096

    def layout(self, options: GenOptions) -> TextLayout:
        return TextLayout(delimiter="|", header=False, line_terminator="\n", column_names=COLUMNS)

    def tables(self, rows: int, seed: int, options: GenOptions) -> Iterator[pa.Table]:
        if rows <= 0:
            return
        loans = draw_loans(self.rng(seed, 0xFFFFFFFF), rows)
        for k, lo in enumerate(range(0, len(loans.length), self.loans_per_chunk)):
            hi = min(lo + self.loans_per_chunk, len(loans.length))
            yield self._chunk(self.rng(seed, k), loans, lo, hi)

    def _chunk(self, rng: np.random.Generator, loans: Loans, lo: int, hi: int) -> pa.Table:
        length = loans.length[lo:hi]
        n = int(length.sum())
        owner = np.repeat(np.arange(lo, hi), length)  # loan index of every row
        start = np.repeat(np.cumsum(length) - length, length)
        j = np.arange(n) - start  # row number within the loan
        last = j == np.repeat(length - 1, length)
        fate = loans.fate[owner]
        period = loans.first_period[owner] + j
        age = loans.age0[owner] + j
        term = loans.term[owner]
        rem = term - age
        adj = rem - np.floor(age * loans.curtail[owner]).astype(np.int64)
        maturity = loans.first_period[owner] - loans.age0[owner] + term

        # amortising balance after `age` payments at the loan's own rate (cents)
        r = loans.rate8[owner] / 8 / 1200
        p0 = loans.upb_cents[owner].astype(np.float64)
        growth = (1 + r) ** age
        payment = p0 * r / (1 - (1 + r) ** -term)
        balance = np.rint(p0 * growth - payment * (growth - 1) / r).astype(np.int64)
        balance = np.maximum(balance - np.rint(loans.curtail[owner] * age * payment * 0.5).astype(np.int64), 0)
        zero_bal = last & (fate > 0)
        has_upb = (j >= 6) & ~zero_bal

        # delinquency: mostly current, some one-month slips, rare unknown; defaults roll up to the end
        dlq = np.where(rng.random(n) < 0.012, 1, 0)
        dlq = np.where(rng.random(n) < 0.0004, 7, dlq)
        until_end = np.repeat(length, length) - 1 - j
        rolling = (fate == 2) & (until_end < 7)
        dlq = np.where(rolling, np.minimum(6 - until_end, 6), dlq)
        dlq = np.where(rolling & last, 6, dlq)
        first_row = j == 0
        if lo <= FORCED_DEFAULT < hi:
            dlq[(owner == FORCED_DEFAULT) & first_row] = 7  # an "X" even in the smallest file

        disposed = last & (fate == 2)
        servicer_row = first_row | (rng.random(n) < 0.004)
        zb_code = np.where(fate == 2, np.where(rng.random(n) < 0.35, 1, 2), 0)

        cols: dict[str, pa.Array] = {
            "LOAN_ID": textfmt.integers(loans.loan_id[owner]),
            "ACT_PERIOD": _month_text("mdy", period),
            "SERVICER": _text(SERVICERS).take(pa.array(loans.servicer[owner], mask=~servicer_row)),
            "ORIG_RATE": _tables()["rate"].take(pa.array(loans.rate8[owner])),
            "CURRENT_UPB": _cents_or_null(balance, has_upb),
            "LOAN_AGE": pa.array(age),
            "REM_MONTHS": pa.array(rem),
            "ADJ_REM_MONTHS": pa.array(adj),
            "MATR_DT": _month_text("my", maturity),
            "MSA": _text(MSAS).take(pa.array(loans.msa[owner])),
            "DLQ_STATUS": _text(DLQ).take(pa.array(dlq)),
            "RELOCATION_MORTGAGE_INDICATOR": pa.repeat(pa.scalar("N"), n),
            "Zero_Bal_Code": _text(ZB_CODES).take(pa.array(zb_code, mask=~zero_bal)),
            "ZB_DTE": _month_text("my", period, zero_bal),
            "LAST_PAID_INSTALLMENT_DATE": _month_text("mdy", period - 7, disposed),
            "FORECLOSURE_DATE": _month_text("mdy", period - 2, disposed),
            "DISPOSITION_DATE": _month_text("mdy", period, disposed),
        }
        # costs and proceeds of a disposal, in cents, relative to the balance written off
        upb_at_end = np.where(disposed, balance, 0)
        shares = {
            "FORECLOSURE_COSTS": (0.02, 0.06), "PROPERTY_PRESERVATION_AND_REPAIR_COSTS": (0.005, 0.03),
            "ASSET_RECOVERY_COSTS": (0.0, 0.004), "MISCELLANEOUS_HOLDING_EXPENSES_AND_CREDITS": (0.001, 0.01),
            "ASSOCIATED_TAXES_FOR_HOLDING_PROPERTY": (0.005, 0.03), "NET_SALES_PROCEEDS": (0.55, 0.95),
            "CREDIT_ENHANCEMENT_PROCEEDS": (0.0, 0.15), "REPURCHASES_MAKE_WHOLE_PROCEEDS": (0.0, 0.0),
            "OTHER_FORECLOSURE_PROCEEDS": (0.0, 0.01), "NON_INTEREST_BEARING_UPB": (0.0, 0.0),
        }
        for col, (lo_share, hi_share) in shares.items():
            cents = np.rint(upb_at_end * rng.uniform(lo_share, hi_share, n)).astype(np.int64)
            cols[col] = _cents_or_null(cents, disposed)
        cols["MI_CANCEL_FLAG"] = pa.nulls(n, pa.string())
        cols["RE_PROCS_FLAG"] = _text(("N",)).take(pa.array(np.zeros(n, dtype=np.int64), mask=~disposed))
        cols["LOAN_HOLDBACK_INDICATOR"] = pa.nulls(n, pa.string())
        cols["SERV_IND"] = pa.repeat(pa.scalar("N"), n)
        return pa.table({c: cols[c] for c in COLUMNS})
