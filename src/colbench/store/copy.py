"""Move results between stores (DuckDB ↔ PostgreSQL): from a laptop's file to the team server, or back.

What `colbench watch` keeps (its watched releases and alerts) goes along when the whole store is copied.
Idempotent: results keep their deterministic ids and are inserted `ON CONFLICT DO NOTHING`, runs missing in the
target are created, and a run the target only knows as unfinished is replaced by a finished copy. Copying twice
copies nothing the second time.
"""

from __future__ import annotations

from collections.abc import Callable

from colbench.store.base import ResultQuery, Store


def copy_store(src: Store, dst: Store, *, run_ids: tuple[str, ...] | None = None,
               progress: Callable[[str, int], None] | None = None) -> tuple[int, int]:
    """Copy every run (or `run_ids`) and its results from `src` to `dst`; returns (runs, results) newly written."""
    known = {r.run_id: r for r in dst.list_runs()}
    runs = [r for r in src.list_runs() if run_ids is None or r.run_id in run_ids]
    copied_runs = copied_results = 0
    for run in reversed(runs):  # oldest first, so an interrupted copy leaves a prefix of history
        there = known.get(run.run_id)
        if there is None:
            dst.create_run(run)
            copied_runs += 1
        elif there.status != "finished" and run.status == "finished":
            dst.update_run(run)
            copied_runs += 1
        added = dst.add_results(src.results(ResultQuery(run_ids=(run.run_id,))))
        copied_results += added
        if progress is not None:
            progress(run.run_id, added)
    if run_ids is None:
        copy_watch_state(src, dst)
    return copied_runs, copied_results


def copy_watch_state(src: Store, dst: Store) -> int:
    """What `colbench watch` keeps (watched releases, alerts) goes along with a whole store; returns the releases
    newly written (a release the target has already is left as it is there)."""
    there = {(r.watch_id, r.version) for r in dst.watched()}
    fresh = [r for r in src.watched() if (r.watch_id, r.version) not in there]
    for release in fresh:
        dst.record_watch(release)
    known = {a.alert_id for a in dst.watch_alerts(pending=False)}
    for alert in src.watch_alerts(pending=False):
        if alert.alert_id not in known:
            dst.save_alert(alert)
    return len(fresh)
