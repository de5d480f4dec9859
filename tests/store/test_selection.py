"""A side named exactly (`RunEnv`, as a watch's explain names the two environments of a release's run) resolves to
the same side as its `RUN:ENV` spelling, without that string being made and parsed again."""

from __future__ import annotations

from pathlib import Path

import pytest

from colbench.model.records import RunEnv
from colbench.store import open_store
from colbench.store.base import StoreError
from colbench.store.selection import resolve_sides
from tests.store.helpers import synthetic_result, synthetic_run


def test_a_run_env_is_the_side_its_run_colon_env_spelling_names(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "results.duckdb"))
    store.create_run(synthetic_run("r1"))
    store.add_results([synthetic_result("r1", i) for i in range(4)])
    exact, spelled = resolve_sides(store, RunEnv("r1", "default"), "r1:default")
    assert (exact.label, exact.run_id, exact.env_name) == ("r1:default", "r1", "default")
    assert (spelled.label, spelled.run_id, spelled.env_name) == (exact.label, exact.run_id, exact.env_name)
    assert [r.result_id for r in exact.results] == [r.result_id for r in spelled.results]
    assert len(exact.results) == 4
    with pytest.raises(StoreError, match="run r1 has no environment 'new'"):
        resolve_sides(store, RunEnv("r1", "new"))
