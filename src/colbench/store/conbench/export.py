"""`colbench export --format conbench`: the BenchmarkResult documents of stored runs, for a fleet's own tooling.

The documents are shaped for the current API (`/api/benchmark-results/`, what Conbench's client libraries
`benchadapt`/`benchclients` post): `github` carries the repository (`--github-repository` or
$CONBENCH_PROJECT_REPOSITORY) and the commit when the run has one. Without any repository the documents have no
`github` and benchadapt fills it from $CONBENCH_PROJECT_REPOSITORY, as for any of its users.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from colbench.model.records import Result, Run
from colbench.store.conbench.documents import case_documents, project_of


def export_documents(results: Sequence[Result], runs: Mapping[str, Run], output: Path, *,
                     repository: str | None = None, run_reason: str | None = None) -> int:
    """Write one document per case of `results` to `output`: a JSON array, or JSON Lines for a `.jsonl` name.
    Returns the number of documents."""
    docs: list[dict[str, Any]] = []
    by_run: dict[str, list[Result]] = {}
    for result in results:
        by_run.setdefault(result.run_id, []).append(result)
    for run_id, run_results in by_run.items():
        run = runs.get(run_id)
        project = project_of(run, run_results, repository)
        docs.extend(case_documents(run_results, run, project, run_reason=run_reason))
    output.parent.mkdir(parents=True, exist_ok=True)
    if output.suffix == ".jsonl":
        output.write_text("".join(json.dumps(d) + "\n" for d in docs))
    else:
        output.write_text(json.dumps(docs, indent=1) + "\n")
    return len(docs)
