"""`colbench delete RUN…`: remove runs from the store, with their spooled results, profiles and explain folders."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from colbench.cli.common import StoreOption, _store, console, err_console, friendly


@friendly
def delete(
    runs: Annotated[list[str], typer.Argument(help="run ids, prefixes, names or 'latest' (as `show` takes them)",
                                              metavar="RUN", show_default=False)],
    yes: Annotated[bool, typer.Option("--yes", help="delete; without it, say what would go and delete "
                                      "nothing")] = False,
    force: Annotated[bool, typer.Option("--force", help="delete a run marked running even when its process is "
                                        "alive, or cannot be checked from here (another host)")] = False,
    store: StoreOption = None,
) -> None:
    """Remove runs from the store: their results and run records, what of them waits in the store's spool, the
    profiles `run --profile` kept and the `explain` folders that name them. Without --yes, a dry run: print what
    would go and exit 0. Exit 2 on an unknown run, an ambiguous prefix, or a run still going on (--force)."""
    from colbench.app.delete import delete_runs, plan_deletion
    from colbench.app.stores import existing_store

    if not yes:
        db = _store(store, create=False)  # read-only: a dry run changes nothing, not even the spool
        plans = plan_deletion(db, runs)
        for plan in plans:
            console.print(_line("would delete", plan, db.url), highlight=False)
        console.print(f"nothing deleted; add --yes to delete {'this run' if len(plans) == 1 else 'these runs'}",
                      highlight=False)
        return
    db = existing_store(store)  # writable, but never a new store
    plans = delete_runs(db, plan_deletion(db, runs), force=force)
    failed = False
    for plan in plans:
        if plan.error:
            failed = True
            err_console.print(_plain(f"colbench: error: run {plan.run_id} not deleted: {plan.error}"),
                              highlight=False)
            continue
        console.print(_line("deleted", plan, db.url), highlight=False)
        for note in plan.notes:
            err_console.print(_plain(f"note: run {plan.run_id}: {note}"), highlight=False)
    if failed:
        raise typer.Exit(2)


def _plain(text: str) -> Any:
    from colbench.redact import redact
    from colbench.render.tables import plain

    return plain(redact(text))


def _line(verb: str, plan: Any, url: str) -> Any:
    """'deleted run ID (name 'x', started 2026-01-01 10:00:00, finished) from STORE: 4 results; 3 profile files
    (1.2 MiB) in 2 folders'."""
    from colbench.render.fmt import fmt_bytes

    about = [f"name {plan.name!r}"] if plan.name else []
    about += [f"started {str(plan.started_at or '?')[:19].replace('T', ' ')}", str(plan.status or "?")]
    done = plan.deleted
    results = plan.results_removed if done else plan.results + plan.spooled
    parts = [f"{results} result{'s' if results != 1 else ''}"]
    if plan.spooled and not done:
        parts[0] += f" ({plan.spooled} waiting in the spool)"
    kept = plan.kept
    if kept.files or kept.folders:
        size = plan.bytes_freed if done else kept.size_bytes
        folders = len(kept.folders)
        parts.append(f"{kept.files} profile file{'s' if kept.files != 1 else ''} ({fmt_bytes(size)}) in "
                     f"{folders} folder{'s' if folders != 1 else ''}: {', '.join(str(f) for f in kept.folders)}")
    else:
        parts.append("no profile files")
    for link in kept.links:
        parts.append(f"{link} is a symlink: only the link {'was' if done else 'is'} removed, never what it points to")
    if plan.going_on and not done:
        parts.append(f"refused without --force: {plan.going_on}")
    return _plain(f"{verb} run {plan.run_id} ({', '.join(about)}) from {url}: {'; '.join(parts)}")
