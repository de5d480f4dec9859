"""The parts of a run record that some runs have: the machine's bandwidth it measured (`MachineBandwidth`, as
`Run.calibration`), the looks of `run --until-decided` (`SequentialLooks`, as `Run.sequential`) and a bisect step's
tag (`BisectTag`, as `Run.bisect`).

Typed in memory; JSON only at the store's edge (`to_json` / `from_json`, called by `Run.to_json` / `Run.from_json`),
in the shape earlier colbench versions stored (keys they did not write take the defaults they meant).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

Json = dict[str, Any]


def _figures(calibration: Mapping[str, object], name: str) -> dict[str, float]:
    figures = calibration.get(name)
    if not isinstance(figures, Mapping):
        return {}
    return {str(threads): gbps for threads, gbps in figures.items() if isinstance(gbps, int | float)}


def _at(figures: Mapping[str, float], threads: int) -> float | None:
    """The figure at `threads`; at another count measured (the largest) when that one was not."""
    return figures.get(str(threads)) or (max(figures.values()) if figures else None)


@dataclass(frozen=True)
class MachineBandwidth:
    """The machine's memory bandwidths a run measured once at its start (machine/bandwidth.py), the physical limits
    E3's read speeds are judged against: Gbit/s by thread count, keyed as stored ("1", "2" …), in the order
    measured, and how they were measured."""

    #: copying a 256 MiB buffer (numpy copyto): the limit of a read that copies every byte on its way in
    memcpy_gbps: dict[str, float] = field(default_factory=dict)
    #: folding the same buffer in place (xor): the limit of a read-only scan
    read_gbps: dict[str, float] = field(default_factory=dict)
    method: str = ""

    def __bool__(self) -> bool:
        return bool(self.memcpy_gbps or self.read_gbps)

    @classmethod
    def from_json(cls, calibration: Mapping[str, object] | None) -> MachineBandwidth:
        """The figures of a stored calibration record; none when the run measured none (no E3 case in it)."""
        if not calibration:
            return cls()
        method = calibration.get("method")
        return cls(_figures(calibration, "memcpy_gbps"), _figures(calibration, "read_gbps"),
                   method if isinstance(method, str) else "")

    def to_json(self) -> Json:
        doc: Json = {}
        if self.memcpy_gbps:
            doc["memcpy_gbps"] = dict(self.memcpy_gbps)
        if self.read_gbps:
            doc["read_gbps"] = dict(self.read_gbps)
        if self.method:
            doc["method"] = self.method
        return doc

    @classmethod
    def of(cls, run: _Calibrated | None) -> MachineBandwidth:
        """A run's bandwidths (none when it measured none, or there is no run)."""
        return (run.calibration if run is not None else None) or cls()

    def figures(self, name: str) -> dict[str, float]:
        """The figures of one measure by its stored name (`memcpy_gbps`, `read_gbps`); none for another name."""
        return dict(self.memcpy_gbps if name == "memcpy_gbps" else self.read_gbps if name == "read_gbps" else {})

    def memcpy(self, threads: int) -> float | None:
        return _at(self.memcpy_gbps, threads)

    def read(self, threads: int) -> float | None:
        return _at(self.read_gbps, threads)


class _Calibrated(Protocol):
    """A run record (model/records.py `Run`), as far as its bandwidths go."""

    @property
    def calibration(self) -> MachineBandwidth | None: ...


@dataclass(frozen=True)
class NoisePriorRecord:
    """The between-process noise earlier runs lent a case at its last look (analysis/comparison.py `NoisePrior`)."""

    variance: float
    df: int
    runs: int
    #: its spread took the place of the metric's floor (analysis/t_tests.py); absent from runs recorded before that
    calibrated: bool = False


@dataclass(frozen=True)
class CaseLook:
    """A case's last look: its blocks, the alpha it was judged at, and the noise earlier runs lent it."""

    blocks: int
    alpha: float
    prior: NoisePriorRecord | None = None
    #: the spreads of the other cases counted on the machine it was judged with ((sigma, df) of each: analysis/
    #: machine_noise.py `MachineSpread`); absent from runs recorded before that
    machine: tuple[tuple[float, int], ...] | None = None

    def to_json(self) -> Json:
        doc: Json = {"blocks": self.blocks, "alpha": self.alpha}
        if self.prior is not None:
            doc["prior"] = {"variance": self.prior.variance, "df": self.prior.df, "runs": self.prior.runs}
            if self.prior.calibrated:
                doc["prior"]["calibrated"] = True
        if self.machine is not None:
            doc["machine"] = [[sigma, df] for sigma, df in self.machine]
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> CaseLook:
        prior = doc.get("prior")
        machine = doc.get("machine")
        return cls(doc["blocks"], doc["alpha"],
                   NoisePriorRecord(prior["variance"], prior["df"], prior["runs"], bool(prior.get("calibrated")))
                   if prior else None,
                   tuple((float(sigma), int(df)) for sigma, df in machine) if machine else None)


@dataclass(frozen=True)
class LookRecord:
    """One look of a session: the share of the budget's information, its alpha, and the blocks it added."""

    fraction: float
    alpha: float
    blocks_added: int


#: a session's case key as stored: the contender environment and the case's label, joined by this separator
CASE_KEY_SEPARATOR = "\x1f"


@dataclass
class SequentialLooks:
    """The looks of `run --until-decided` (runner/session.py), which compare and the report replay: the settings
    the family was judged at, each look, and every case's last look by `contender<US>label`."""

    baseline: str
    #: None: the metric's default threshold
    threshold: float | None
    floor: float
    family_size: int | None
    metric: str = "time"
    alpha: float | None = None
    spending: str | None = None
    basis: str = "auto"
    looks: list[LookRecord] = field(default_factory=list)
    cases: dict[str, CaseLook] = field(default_factory=dict)

    def cases_of(self, contender: str) -> dict[str, CaseLook]:
        """The last look of each case of one contender environment, by the case's label."""
        return {key.split(CASE_KEY_SEPARATOR, 1)[1]: look for key, look in self.cases.items()
                if key.split(CASE_KEY_SEPARATOR, 1)[0] == contender}

    def to_json(self) -> Json:
        return {"baseline": self.baseline, "metric": self.metric, "alpha": self.alpha, "threshold": self.threshold,
                "floor": self.floor, "family_size": self.family_size, "spending": self.spending,
                "basis": self.basis,
                "looks": [{"fraction": look.fraction, "alpha": look.alpha, "blocks_added": look.blocks_added}
                          for look in self.looks],
                "cases": {key: look.to_json() for key, look in self.cases.items()}}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> SequentialLooks:
        return cls(baseline=doc.get("baseline", ""), threshold=doc.get("threshold"),
                   floor=doc.get("floor", 0.0), family_size=doc.get("family_size"),
                   metric=doc.get("metric", "time"), alpha=doc.get("alpha"), spending=doc.get("spending"),
                   basis=doc.get("basis", "auto"),
                   looks=[LookRecord(look["fraction"], look["alpha"], look["blocks_added"])
                          for look in doc.get("looks") or []],
                   cases={key: CaseLook.from_json(look) for key, look in (doc.get("cases") or {}).items()})


@dataclass
class BisectTag:
    """A run measured by `colbench bisect` (app/bisect_measure.py): the search's id and fingerprint, its step, the
    points it measured, the package, and the search's time so far (`elapsed_s`, once a step was measured)."""

    id: str
    fingerprint: str = ""
    step: int | None = None
    points: list[str] = field(default_factory=list)
    package: str | None = None
    elapsed_s: float | None = None

    def to_json(self) -> Json:
        doc: Json = {"id": self.id, "fingerprint": self.fingerprint, "step": self.step, "points": list(self.points),
                     "package": self.package}
        if self.elapsed_s is not None:
            doc["elapsed_s"] = self.elapsed_s
        return doc

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> BisectTag:
        step = doc.get("step")
        elapsed = doc.get("elapsed_s")
        return cls(id=str(doc.get("id") or ""), fingerprint=str(doc.get("fingerprint") or ""),
                   step=step if isinstance(step, int) else None, points=[str(p) for p in doc.get("points") or []],
                   package=doc.get("package"),
                   elapsed_s=float(elapsed) if isinstance(elapsed, int | float) else None)
