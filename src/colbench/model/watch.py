"""What `colbench watch` keeps: the releases it watched, its alerts, and who is running a pass.

- `WatchedRelease`: one release of a package, measured on one machine against the last release watched before it
  (its `baseline`), with the verdict of each case and of the release, the first bad release when a bisect was
  needed, and what `explain` found. One per (watch, version): a pass that finds it stored measures nothing again.
- `WatchAlert`: what a pass had to tell (its Markdown and its webhook body), kept until a webhook took it.
- `WatchTag`: the mark of a run a watch measured (`Run.watch`), so a pass cut short finds its run again.

A watch is identified by `watch_id`, a fingerprint of what decides its verdicts: the targets and their params, the
package, the requirements added to every environment, how it is measured, and the machine.
Records become JSON only at the store's edge (`to_json`/`from_json`), as `Result` and `Run` do.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, TypedDict

from colbench.redact import redact_doc

Json = dict[str, Any]

#: a release's verdict: the first one of a watch is its `baseline`; `error` when it could not be measured
ReleaseVerdict = Literal["baseline", "regression", "improvement", "no change", "inconclusive", "error"]
VERDICTS: tuple[str, ...] = ("baseline", "regression", "improvement", "no change", "inconclusive", "error")
#: verdicts of releases that worked (installed, imported, ran): a later release is compared with the newest of these
#: that is not pending (`WatchedRelease.pending`)
MEASURED: tuple[str, ...] = ("baseline", "regression", "improvement", "no change", "inconclusive")
#: passes that measure an inconclusive release: each one after the first measures it afresh (a new run, against the
#: last decided release); after the last it stands as measured and becomes a baseline, said in its notes
INCONCLUSIVE_TRIES = 3


class WatchTag(TypedDict):
    """`Run.watch`: the watch that measured this run, and which two releases it compared."""

    id: str
    package: str
    baseline: str
    version: str


class WatchHolder(TypedDict):
    """Who runs a pass of a watch (store/run_owner.py tells whether that process still lives)."""

    host: str
    pid: int
    started: float


def holder_of(doc: Json) -> WatchHolder:
    """A holder as a store keeps it (JSON)."""
    return WatchHolder(host=str(doc.get("host", "")), pid=int(doc.get("pid") or 0),
                       started=float(doc.get("started") or 0.0))


def _plain(value: Any) -> Any:
    """JSON's own shapes: tuples as lists (what a document read back holds)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _known(cls: type, doc: Json) -> Json:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in doc.items() if k in names}


@dataclass(frozen=True)
class FunctionGrowth:
    """One function of an explain's top list: its self cost on both sides and its share of the change."""

    function: str
    library: str
    before: float
    after: float
    share: float | None

    @property
    def delta(self) -> float:
        return self.after - self.before


@dataclass(frozen=True)
class CaseExplained:
    """What `explain` said of a regressed case: the top functions, and where its flame graph and report are."""

    functions: tuple[FunctionGrowth, ...] = ()
    flamegraph: str | None = None
    report: str | None = None
    total_before: float | None = None
    total_after: float | None = None
    unit: str = "instructions"
    error: str | None = None

    def to_json(self) -> Json:
        plain: Json = _plain(asdict(self))
        return plain

    @classmethod
    def from_json(cls, doc: Json) -> CaseExplained:
        known = _known(cls, doc)
        known["functions"] = tuple(FunctionGrowth(**_known(FunctionGrowth, f)) for f in known.get("functions") or ())
        return cls(**known)


@dataclass(frozen=True)
class CaseVerdict:
    """One case of a release against its baseline: the comparison's verdict, ratio and interval."""

    case_id: str
    label: str
    metric: str
    verdict: str
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    baseline_median: float | None = None
    contender_median: float | None = None
    #: the case failed on the release (its one-line cause): the release is an error row
    error: str | None = None
    explained: CaseExplained | None = None

    def to_json(self) -> Json:
        doc: Json = _plain(asdict(self))
        doc["explained"] = self.explained.to_json() if self.explained is not None else None
        return doc

    @classmethod
    def from_json(cls, doc: Json) -> CaseVerdict:
        known = _known(cls, doc)
        explained = known.get("explained")
        known["explained"] = CaseExplained.from_json(explained) if isinstance(explained, dict) else None
        return cls(**known)


@dataclass(frozen=True)
class WatchedRelease:
    """One release as a watch measured it on one machine (see the module docstring)."""

    watch_id: str
    package: str
    version: str
    machine_id: str
    verdict: str
    watched_at: str
    machine_name: str | None = None
    targets: tuple[str, ...] = ()
    #: the release it was compared with (None for the first release of a watch)
    baseline: str | None = None
    #: the run that measured it (None: not measured, e.g. a release that does not install)
    run_id: str | None = None
    cases: tuple[CaseVerdict, ...] = ()
    #: why it could not be measured (verdict "error")
    cause: str = ""
    #: releases between the baseline and this one that could not be measured (the change may be at any of them)
    between: tuple[str, ...] = ()
    #: where a bisect over `between` put the change: (last good, first bad), and its id
    last_good: str | None = None
    first_bad: str | None = None
    bisect_id: str | None = None
    #: the index the release was listed on (no credentials: redacted)
    index: str = ""
    notes: tuple[str, ...] = ()
    #: executions of this release's run that this pass ran, and those it found stored (a pass cut short)
    measured: int = 0
    reused: int = 0
    #: passes that measured this release (an inconclusive one is measured again: INCONCLUSIVE_TRIES)
    tries: int = 1

    @property
    def pending(self) -> bool:
        """Inconclusive, with passes left to decide it: not a baseline yet, and the next pass measures it again.
        (A release that stayed inconclusive would otherwise become the baseline of every later one, never
        measured again: a change it hid would be hidden for good.)"""
        return self.verdict == "inconclusive" and self.tries < INCONCLUSIVE_TRIES

    @property
    def regressed(self) -> list[CaseVerdict]:
        return [c for c in self.cases if c.verdict == "regression"]

    @property
    def worked(self) -> bool:
        return self.verdict in MEASURED

    def to_json(self) -> Json:
        doc: Json = _plain(asdict(self))
        doc["cases"] = [c.to_json() for c in self.cases]
        return doc

    @classmethod
    def from_json(cls, doc: Json) -> WatchedRelease:
        known = _known(cls, doc)
        known["cases"] = tuple(CaseVerdict.from_json(c) for c in known.get("cases") or ())
        for name in ("targets", "between", "notes"):
            known[name] = tuple(known.get(name) or ())
        return cls(**known)

    def redacted(self) -> WatchedRelease:
        copy: WatchedRelease = redact_doc(self)
        return copy


@dataclass(frozen=True)
class WatchAlert:
    """What one pass had to tell: kept in the store until a webhook took it (`sent_at`), tried again by the next
    pass when it could not be sent (`attempts`, `last_error`)."""

    alert_id: str
    watch_ids: tuple[str, ...]
    created_at: str
    markdown: str
    payload: Json = field(default_factory=dict)
    sent_at: str | None = None
    attempts: int = 0
    last_error: str | None = None

    def to_json(self) -> Json:
        plain: Json = _plain(asdict(self))
        return plain

    @classmethod
    def from_json(cls, doc: Json) -> WatchAlert:
        known = _known(cls, doc)
        known["watch_ids"] = tuple(known.get("watch_ids") or ())
        return cls(**known)
