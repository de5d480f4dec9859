"""The version histories of docs/history.md: one PNG per case of a benchmark over the versions of a package, drawn
as the report and the dashboard draw them (report/plots_history.py: each version at the reference's level by
comparisons, change points, changes of Python), and each history's table as text.

    uv run python scripts/version_history_figures.py --store history.duckdb csv-read --param reader=pyarrow \\
        --package pyarrow --out docs/img/history
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("benchmark")
    parser.add_argument("--store", required=True)
    parser.add_argument("--package", default="pyarrow")
    parser.add_argument("--param", action="append", default=[], help="NAME=VALUE filter (repeatable)")
    parser.add_argument("--out", type=Path, required=True, help="file prefix of the PNGs")
    args = parser.parse_args()
    filters = dict(option.split("=", 1) for option in args.param)

    from colbench.report.plots_history import history_figure, version_series_from_results
    from colbench.store import open_store
    from colbench.store.queries import ResultQuery

    store = open_store(args.store, create=False)
    results = [r for r in store.results(ResultQuery(benchmark=args.benchmark, status="ok"))
               if all(str(r.params.get(k)) == v for k, v in filters.items())]
    by_case: dict[str, list[object]] = {}
    for r in results:
        by_case.setdefault(r.case_id, []).append(r)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for members in by_case.values():
        first = members[0]
        shown = {k: v for k, v in first.params.items() if k not in filters and (k, v) not in (  # type: ignore[attr-defined]
            ("allocator", "default"), ("cache", "warm"))}
        label = f"{args.benchmark} " + " ".join(f"{k}={v}" for k, v in shown.items())
        for series in version_series_from_results(members, label, args.package):  # type: ignore[arg-type]
            slug = re.sub(r"[^a-z0-9]+", "-", " ".join(str(v) for v in shown.values()).lower()).strip("-")
            path = args.out.with_name(f"{args.out.name}-{slug}.png")
            figure = history_figure(series)
            if figure is not None:
                figure.savefig(path, dpi=110)
            print(f"== {label}: {path}")
            print(f"reference {series.reference}; {series.note}")
            for i, point in enumerate(series.points):
                python = ".".join(point.interpreter.split(".")[:2])
                change = next((f" change {c.magnitude:+.1%}" for c in series.changes if c.index == i), "")
                moved = " (Python changes)" if i in series.python_changes else ""
                at = f"{point.median * 1e3:8.2f} ms [{point.low * 1e3:.2f}, {point.high * 1e3:.2f}]" \
                    if point.comparable else f"{point.median * 1e3:8.2f} ms raw, incomparable"
                print(f"{point.version:>8} Python {python:<5} {at}{moved}{change}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
