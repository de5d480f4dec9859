"""Loading real runs from a test's store, checking images, and deriving a long history from real records."""

from __future__ import annotations

import copy
import io
import xml.etree.ElementTree as ElementTree
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

from PIL import Image

from colbench.analysis.aggregate import CaseSummary, summarize_cases
from colbench.analysis.stats import summary_stats
from colbench.model.records import Run
from colbench.store import open_store
from colbench.store.base import ResultQuery, Store, resolve_run_id


def store_of(home: Path) -> Store:
    return open_store(str(home / "results.duckdb"), create=False)


def load_run(home: Path, ref: str = "latest") -> tuple[Store, Run, list[CaseSummary]]:
    db = store_of(home)
    run_id = resolve_run_id(db, ref)
    return db, db.get_run(run_id), summarize_cases(db.results(ResultQuery(run_ids=(run_id,))))


def load_all(home: Path) -> tuple[Store, Run, list[CaseSummary]]:
    """Every result in the store summarised together, with the latest run's document."""
    db = store_of(home)
    return db, db.get_run(resolve_run_id(db, "latest")), summarize_cases(db.results())


def assert_png(data: bytes, min_width: int = 300, min_height: int = 100) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    image = Image.open(io.BytesIO(data))
    image.verify()
    width, height = Image.open(io.BytesIO(data)).size
    assert width >= min_width and height >= min_height, (width, height)
    return width, height


def assert_svg(text: str) -> None:
    root = ElementTree.fromstring(text.encode())
    assert root.tag.endswith("svg"), root.tag
    assert "<text" in text or "<path" in text


def derived_history(source: Path, target: Path, runs: int = 12, step_at: int = 6, factor: float = 1.25,
                    series: str = "wall_s") -> None:
    """A store with `runs` runs made of the real results of the source's first run, the times multiplied by
    `factor` from run `step_at` on: a known step for the change-point marks (the detection is tested by the
    analysis tests; this checks that reports and pages show what it finds). The runs before the step are of one
    commit and those after of another, so the repeated runs of unchanged code (±0.4%) calibrate raw medians across
    runs (analysis/chain.py). `series="instructions"` turns the times into counts (one per ns), as a `--measure
    instructions` run records them."""
    source_db = store_of(source)
    first = source_db.list_runs()[-1]
    results = source_db.results(ResultQuery(run_ids=(first.run_id,), status="ok"))
    target_db = open_store(str(target))
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for index in range(runs):
        scale = (factor if index >= step_at else 1.0) * (1 + 0.004 * (index % 3))
        run = replace(copy.deepcopy(first), run_id=f"20260101T{index:06d}-hist{index:02d}", name=f"h{index}",
                      started_at=(start + timedelta(days=index)).isoformat(),
                      commit={"sha": f"{index // step_at:02d}c0ffee0000"})
        target_db.create_run(run)
        for result in results:
            walls = [v * scale for v in result.samples["wall_s"] if v is not None]
            copy_ = replace(copy.deepcopy(result), run_id=run.run_id, result_id=f"{run.run_id}-{result.result_id}",
                            timestamp=run.started_at, commit=run.commit, run_name=run.name)
            copy_.samples["wall_s"] = list(walls)
            copy_.summary["wall_s"] = summary_stats(walls)
            if series == "instructions":
                counts = [round(v * 1e9) for v in walls]
                copy_ = replace(copy_, samples={"instructions": counts},
                                summary={"instructions": summary_stats(counts)},
                                measure={"metrics": ["instructions"]}, first_iteration=None)
            target_db.add_result(copy_)
