"""A case's params as the type an experiment's table or plot reads them as: a name (reader, format, source …) or
a whole number (threads, rows, batch size).

A stored param is any `ParamValue`; each experiment knows which of its params is which, and says so here
(`model/benchmark.str_param` / `int_param` refuse a value of another type with a message naming it). `default`
stands in for a param that records written before it existed lack (E3's `source`, a case's `threads`).
"""

from __future__ import annotations

from colbench.analysis.aggregate import CaseSummary
from colbench.model.benchmark import int_param, str_param
from colbench.model.params import ParamValue


def _params(summary: CaseSummary, name: str, default: ParamValue) -> dict[str, ParamValue]:
    return summary.params if default is None else {name: default, **summary.params}


def param_text(summary: CaseSummary, name: str, default: str | None = None) -> str:
    """A param holding a name; KeyError when the case lacks it and no default is given."""
    return str_param(_params(summary, name, default), name)


def param_int(summary: CaseSummary, name: str, default: int | None = None) -> int:
    """A param holding a count; KeyError when the case lacks it and no default is given."""
    return int_param(_params(summary, name, default), name)


def thread_count(summary: CaseSummary) -> int:
    """The case's thread count (1 for a record from before every case carried it)."""
    return param_int(summary, "threads", 1)
