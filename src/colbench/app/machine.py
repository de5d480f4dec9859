"""`colbench machine`: what this machine is, and the checks that tell how noisy timings will be here."""

from __future__ import annotations

from dataclasses import dataclass

from colbench.model.records import EnvironmentCheck, MachineInfo


@dataclass(frozen=True)
class MachineReport:
    info: MachineInfo
    checks: list[EnvironmentCheck]


def describe_machine(name: str | None = None) -> MachineReport:
    """`name`: a name for this machine (part of its fingerprint)."""
    from colbench.machine.facts import checks_as_json, environment_checks, machine_info

    info = machine_info(name)
    return MachineReport(info, checks_as_json(environment_checks(info)))
