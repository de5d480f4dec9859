"""The machine's memory bandwidths a run measured once at its start (`Run.calibration`, written by
machine/bandwidth.py): the physical limits E3's read speeds are judged against."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from colbench.model.records import Run


def _figures(calibration: Mapping[str, object], name: str) -> dict[str, float]:
    figures = calibration.get(name)
    if not isinstance(figures, Mapping):
        return {}
    return {str(threads): float(gbps) for threads, gbps in figures.items() if isinstance(gbps, int | float)}


def _at(figures: Mapping[str, float], threads: int) -> float | None:
    """The figure at `threads`; at another count measured (the largest) when that one was not."""
    return figures.get(str(threads)) or (max(figures.values()) if figures else None)


@dataclass(frozen=True)
class MachineBandwidth:
    """Gbit/s by thread count, keyed as stored ("1", "2" …), in the order measured."""

    #: copying a 256 MiB buffer (numpy copyto): the limit of a read that copies every byte on its way in
    memcpy_gbps: dict[str, float] = field(default_factory=dict)
    #: folding the same buffer in place (xor): the limit of a read-only scan
    read_gbps: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_calibration(cls, calibration: Mapping[str, object] | None) -> MachineBandwidth:
        """The figures of a run's calibration record; none when the run measured none (no E3 case in it)."""
        if not calibration:
            return cls()
        return cls(_figures(calibration, "memcpy_gbps"), _figures(calibration, "read_gbps"))

    @classmethod
    def of(cls, run: Run | None) -> MachineBandwidth:
        return cls.from_calibration(run.calibration if run is not None else None)

    def memcpy(self, threads: int) -> float | None:
        return _at(self.memcpy_gbps, threads)

    def read(self, threads: int) -> float | None:
        return _at(self.read_gbps, threads)
