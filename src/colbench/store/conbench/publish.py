"""Publishing one colbench run to a Conbench server: idempotent and resumable.

The server is asked which cases of the run it holds already (by their deterministic batch ids) and only the others
are posted, so publishing twice creates nothing new, a publish cut short goes on where it stopped, and a fleet of
machines (or a lost local file) cannot duplicate a result: there is no local ledger to trust. A document the
server refuses is reported with the server's reason and the rest of the run is still posted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from colbench.model.records import Result, Run
from colbench.store.conbench.client import ConbenchError, ConbenchSession
from colbench.store.conbench.documents import case_documents, project_of, run_record, run_update


@dataclass(frozen=True)
class Refusal:
    """A result the server would not take: which case, and the server's reason."""

    case: str
    reason: str


@dataclass
class PublishReport:
    run_id: str
    api: str
    cases: int = 0
    posted: int = 0
    present: int = 0  # already on the server: published before
    refused: list[Refusal] = field(default_factory=list)
    #: the server keeps run records (name, finish time, errors): False on Conbench since August 2023
    run_record: bool = False


def case_label(doc: Mapping[str, Any]) -> str:
    tags = doc["tags"]
    params = " ".join(f"{k}={v}" for k, v in tags.items() if k != "name")
    env = doc["context"].get("env_name")
    return f"{tags['name']} {params}".strip() + (f" [{env}]" if env and env != "default" else "")


def publish_run(session: ConbenchSession, run: Run, results: Sequence[Result], *,
                repository: str | None = None, run_reason: str | None = None) -> PublishReport:
    """Post the run record (where the server keeps them) and one BenchmarkResult per case of `run` that the
    server does not hold yet. Raises ConbenchError when nothing more can be posted (login, network)."""
    if not session.logged_in:
        session.login()
    api = session.generation()
    project = project_of(run, results, repository)
    if not project.repository and (project.commit or api.repository_required):
        why = f"run {run.run_id} is at commit {project.commit}, which Conbench files under its GitHub " \
            "repository" if project.commit else f"Conbench at {session.shown_url} ({api.description}) needs " \
            "one on every result"
        raise ConbenchError(f"no GitHub repository: {why}: pass --github-repository https://github.com/ORG/REPO "
                            "or set CONBENCH_PROJECT_REPOSITORY")
    docs = case_documents(results, run, project, commit_required=api.commit_required, run_reason=run_reason)
    report = PublishReport(run_id=run.run_id, api=api.description, cases=len(docs))
    if not docs:
        return report
    # the run record first: a result posted before it would create the run with none of this
    record = run_record(run, docs, project, commit_required=api.commit_required, run_reason=run_reason)
    report.run_record = session.save_run(record, run_update(record))
    held = session.batches(run.run_id)
    for doc in docs:
        if doc["batch_id"] in held:
            report.present += 1
            continue
        refused = session.post_result(doc)
        if refused is None:
            report.posted += 1
        else:
            report.refused.append(Refusal(case_label(doc), refused))
    return report
