"""`colbench delete RUN…`: remove runs from the store, with everything colbench keeps of them.

A run is its record and its results in the store (deleted together, in one transaction: `Store.delete_run`), what
of it waits in the store's spool (deleted first, so a sync never brings it back), the profiles `run --profile`
kept (`$COLBENCH_HOME/profiles/<store key>/runs/<run id>/`) and the `explain` folders with the run on either side
(`…/explain/<RUN.ENV>--<RUN.ENV>/`). `plan_deletion` says what would go (the dry run reads only); `delete_runs`
deletes it. Nothing is deleted before every run was found and checked: a run going on in another process (unless
`force`), or a profiles folder that leads out of colbench's tree, stops the whole command first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from colbench.app.errors import UsageError
from colbench.paths import UnsafePath
from colbench.profiles.stored import KeptFiles, check_removable, remove_run_profiles, run_kept_files
from colbench.store.base import ResultQuery, Store, StoreError, resolve_run_id


@dataclass
class RunDeletion:
    """One run: what is stored and kept of it, and (after `delete_runs`) what went."""

    run_id: str
    name: str | None
    started_at: str | None
    status: str | None
    results: int  # in the store
    spooled: int  # waiting in the store's spool
    kept: KeptFiles  # the profiles folder's files of the run
    going_on: str | None = None  # why it counts as going on in a process (refused without force)
    deleted: bool = False
    error: str | None = None  # why the store did not delete it
    results_removed: int = 0
    bytes_freed: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def folders(self) -> tuple[Path, ...]:
        return self.kept.folders


def plan_deletion(store: Store, refs: Sequence[str]) -> list[RunDeletion]:
    """What deleting the runs `refs` name (as `show` takes them: id, prefix, name, `latest`) would remove; reads
    only. An unknown or ambiguous reference is a UsageError (nothing is deleted)."""
    from colbench.store.run_owner import going_on

    if not refs:
        raise UsageError("name the runs to delete: run ids, prefixes, names or `latest` (`colbench show --runs` "
                         "lists them)")
    check_removable(store)
    plans = []
    for run_id in dict.fromkeys(_resolve(store, ref) for ref in refs):
        run = store.get_run(run_id)
        spool = getattr(store, "spool", None)
        plans.append(RunDeletion(
            run_id=run_id, name=run.name, started_at=run.started_at, status=run.status,
            results=len(store.summaries(ResultQuery(run_ids=(run_id,)))),
            spooled=spool.run_results(run_id) if spool is not None else 0,
            kept=run_kept_files(store, run_id), going_on=going_on(run)))
    return plans


def _resolve(store: Store, ref: str) -> str:
    try:
        return resolve_run_id(store, ref)
    except StoreError as exc:  # no such run, an ambiguous prefix: the user's to fix, and nothing is deleted
        raise UsageError(f"{exc}; nothing deleted") from None


def delete_runs(store: Store, plans: Sequence[RunDeletion], *, force: bool = False) -> list[RunDeletion]:
    """Delete each planned run (store, spool, profiles). Refused before anything is deleted when a run is going on
    in a process, unless `force`. A run the store refuses after all (it started going on since the plan was made,
    the store went away) gets its `error`, and the others go on."""
    if not force:
        for plan in plans:
            if plan.going_on:
                raise UsageError(f"run {plan.run_id} is not deleted: {plan.going_on}; wait for it to end (or stop "
                                 "it), or add --force to delete it anyway; nothing deleted")
    for plan in plans:
        try:
            plan.results_removed = store.delete_run(plan.run_id, force=force)
        except StoreError as exc:
            plan.error = str(exc)
            continue
        plan.deleted = True
        try:
            plan.bytes_freed = remove_run_profiles(store, plan.run_id)
        except (OSError, UnsafePath) as exc:  # the run is gone from the store; say what is left on disk
            plan.notes.append(f"its profiles were not all removed ({exc}): {', '.join(map(str, plan.folders))}")
    return list(plans)
