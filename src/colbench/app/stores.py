"""Which store a use case means: the one named (a DuckDB file or a postgresql:// URL), else $COLBENCH_STORE, else
the default file in $COLBENCH_HOME; and which run of it a reference names."""

from __future__ import annotations

from colbench.paths import default_store_url
from colbench.store import open_store
from colbench.store.base import Store, resolve_run_id


def store_to_plan(url: str | None) -> Store | None:
    """For a dry run, which writes nothing: the store opened read-only (never created, never upgraded to a newer
    schema), or None when there is no store yet (nothing has been measured into it)."""
    from pathlib import Path

    from colbench.store import is_postgres_url

    target = url or default_store_url()
    if not is_postgres_url(target) and not Path(target).expanduser().exists():
        return None
    return open_store(target, create=False, read_only=True)


def store_at(url: str | None, create: bool = True, wait_s: float | None = None) -> Store:
    """The store at `url` (None: the default). `create=False` is for reading only: the store must exist and a DuckDB
    file is opened read-only, so reading never changes it; `wait_s` bounds how long that opening waits for a file
    another process holds (None: COLBENCH_STORE_WAIT_S)."""
    return open_store(url or default_store_url(), create=create, read_only=not create, wait_s=wait_s)


def existing_store(url: str | None) -> Store:
    """The store at `url` (None: the default), open for writing, but never a new one: for what changes a store that
    must be there (`delete --yes`, `store sync`)."""
    return open_store(url or default_store_url(), create=False)


def run_id_of(store: Store, ref: str) -> str:
    """The run a reference names: an id, a unique prefix, a run name or `latest`."""
    return resolve_run_id(store, ref)


def stored_case(url: str | None, ref: str) -> tuple[str, dict[str, list[str]]]:
    """The benchmark and every param of the stored case `ref` names: its case id or a unique prefix of one (`show
    --format json` lists them, `show` names the case), so one case is named without a `--param` for each param."""
    from colbench.app.errors import UsageError
    from colbench.redact import clip

    store = store_at(url, create=False)
    found = {s.case_id: s for s in store.summaries() if s.case_id.startswith(ref)} if ref else {}
    if not found:
        raise UsageError(f"--case {clip(ref)!r}: no case in the store has that id (`colbench show RUN --format json` "
                         "lists each case's case_id)")
    if len(found) > 1:
        shown = ", ".join(sorted(found)[:4])
        more = " …" if len(found) > 4 else ""
        raise UsageError(f"--case {clip(ref)!r}: {len(found)} cases start with it ({shown}{more}); give more of the id")
    (summary,) = found.values()
    return summary.benchmark, {name: [str(value)] for name, value in summary.params.items()}
