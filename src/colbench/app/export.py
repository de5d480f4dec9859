"""`colbench export`: a store's results (raw samples included) as a file other tools read: Parquet, CSV, JSON lines,
or Conbench's documents."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from colbench.app.errors import UsageError
from colbench.app.stores import run_id_of
from colbench.paths import UnsafePath, check_output_file
from colbench.store.base import ResultQuery, Store
from colbench.store.export import FORMATS as FILE_FORMATS

FORMATS = (*FILE_FORMATS, "conbench")


def check_export(fmt: str, output: Path | None) -> Path:
    """The file to write: a format colbench writes, into the file named (a file, not a directory), else
    `colbench-results.<format>` (`.json` for Conbench's documents)."""
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r}: choose from {', '.join(FILE_FORMATS)}, conbench")
    output = output or Path(f"colbench-results.{'json' if fmt == 'conbench' else fmt}")
    if output.is_dir():
        raise UsageError(f"--output {output}: is a directory; give a file name, e.g. {output / ('results.' + fmt)}")
    try:  # a FIFO, a socket or a device: refused before the store is read
        return check_output_file(output, "--output", makes_folders=True)
    except UnsafePath as exc:
        raise UsageError(str(exc)) from None


def export(store: Store, run_refs: Sequence[str], fmt: str, output: Path) -> int:
    """Write the results of the runs named (none: every run) to `output`; returns the rows written."""
    from colbench.store.export import export_results

    ids = tuple(run_id_of(store, r) for r in run_refs) if run_refs else None
    results = [r.redacted() for r in store.results(ResultQuery(run_ids=ids))]  # older records may hold secrets
    try:
        if fmt == "conbench":
            from colbench.store.conbench.export import export_documents

            runs = {run_id: store.get_run(run_id).redacted() for run_id in {r.run_id for r in results}}
            return export_documents(results, runs, output)
        return export_results(results, fmt, output)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
