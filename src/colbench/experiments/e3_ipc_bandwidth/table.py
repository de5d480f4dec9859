"""The table of E3 — Arrow Java in-memory read bandwidth (2018):
what this machine measured beside the published figures."""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.case_params import param_int, param_text, thread_count
from colbench.experiments.e3_ipc_bandwidth.published import E3_CORE_SCALING_GBPS, E3_GBPS
from colbench.model.records import Run
from colbench.model.run_parts import MachineBandwidth

#: how a verdict ends for a case faster than the bandwidth of its kind (the plots star those points)
CACHE_RESIDENT = "cache-resident"


def reference_for(bandwidth: MachineBandwidth, summary: CaseSummary) -> tuple[float | None, str]:
    """The machine bandwidth a case is judged against, and its name: a zero-copy read (the `buffer` source) only
    reads its bytes, so its limit is the read bandwidth (an xor fold over 256 MiB, read-only like the scan); through
    the copying `stream` every byte is copied on its way in, so there it is memcpy. A percentage against memcpy for
    a read-only scan would exceed 100% on any machine (a copy moves each byte twice), which is no finding."""
    if summary.params.get("source", "buffer") == "stream":
        return bandwidth.memcpy(thread_count(summary)), "memcpy"
    return bandwidth.read(thread_count(summary)), "read bandwidth"


def gbps_verdict(summary: CaseSummary, bandwidth: MachineBandwidth) -> tuple[float | None, str]:
    """Median Gbps and a note on it against the machine's measured bandwidth of the same kind (`reference_for`).

    Access modes that do not read the value bytes (lazy, offsets) over the zero-copy buffer count bytes
    nothing touched: their figure is 'bytes not touched', never a speed, whatever its size. Through the
    copying stream every byte is copied on its way in (as in the post, whose holder figures are such
    reads), so there it is a speed. Faster than memory can be read means the data sat in a CPU cache: it is
    said so, never given as a percentage above 100."""
    gbps = (summary.metrics.get("gbps") or {}).get("median")
    if summary.params.get("access") in ("lazy", "offsets") and summary.params.get("source", "buffer") == "buffer":
        return gbps, "bytes not touched"
    reference, name = reference_for(bandwidth, summary)
    if gbps is None or reference is None:
        return gbps, ""
    if gbps > reference:
        return gbps, f"above {name}: {CACHE_RESIDENT}"
    return gbps, f"{gbps / reference:.0%} of {name}"


def build_table(summaries: Sequence[CaseSummary], run: Run) -> Table | None:
    rows = [s for s in summaries if s.benchmark == "ipc-bandwidth"]
    if not rows:
        return None
    bandwidth = MachineBandwidth.of(run)
    table = Table(title="E3 — Arrow in-memory read bandwidth (value bytes only); here: memcpy "
                  + ", ".join(f"{t} thr {g:g}" for t, g in bandwidth.memcpy_gbps.items()) + " Gbps, read "
                  + ", ".join(f"{t} thr {g:g}" for t, g in bandwidth.read_gbps.items()) + " Gbps")
    for column in ("runtime", "type", "access", "source", "batch rows", "threads", "Gbps",
                   "vs machine (zero-copy: read; stream: memcpy)",
                   "published (Java, 1 KiB)"):
        table.add_column(column, justify="left" if column in ("runtime", "type", "access", "source") else "right")
    key = lambda s: (s.params["runtime"], s.params["type"], s.params["access"], s.params["source"],  # noqa: E731
                     s.params["batch_rows"], s.params["threads"])
    for s in sorted(rows, key=key):
        if not s.ok:
            table.add_row(*map(str, key(s)), f"[red]{','.join(s.error_kinds)}[/red]", "", "")
            continue
        gbps, note = gbps_verdict(s, bandwidth)
        shown = f"[yellow]{note}[/yellow]" if note.startswith(("bytes", "above")) else note
        speed = "—" if note == "bytes not touched" else (f"{gbps:.2f}" if gbps is not None else "-")
        published = _published(s)
        table.add_row(*map(str, key(s)), speed, shown, f"{published:g}" if published else "")
    return table


def _published(s: CaseSummary) -> float | None:
    """The post's figure for a case measured as the post did (Java's 1 KiB binary values from a stream): its
    single-thread bandwidth, or its core scaling of offsets in 10 000-row batches."""
    p = s.params
    as_in_post = p["type"] == "binary" and p["value_size"] == 1024 and p["source"] == "stream"
    published = None
    if as_in_post and p["threads"] == 1:
        published = E3_GBPS.get((param_text(s, "access"), param_int(s, "batch_rows")))
    if published is None and as_in_post and p["access"] == "offsets" and p["batch_rows"] == 10_000:
        published = E3_CORE_SCALING_GBPS.get(thread_count(s))
    return published
