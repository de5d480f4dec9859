"""Machine information and the environment checks that tell how noisy timings will be (cf. `pyperf system show`)."""

from __future__ import annotations

import hashlib
import os
import platform
import socket
from dataclasses import dataclass
from pathlib import Path

import psutil

from colbench.model.records import EnvironmentCheck, MachineInfo

_CPU = Path("/sys/devices/system/cpu")


def _read(path: Path | str) -> str | None:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


def _cpu_model() -> str:
    text = _read("/proc/cpuinfo") or ""
    for line in text.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def _caches() -> dict[str, str]:
    caches: dict[str, str] = {}
    for index in sorted((_CPU / "cpu0" / "cache").glob("index*")):
        level, kind, size = (_read(index / f) for f in ("level", "type", "size"))
        if level and size:
            label = f"L{level}" + {"Data": "d", "Instruction": "i"}.get(kind or "", "")
            caches[label] = size
    return caches


def _governors() -> list[str]:
    found = {_read(p) for p in _CPU.glob("cpu[0-9]*/cpufreq/scaling_governor")}
    return sorted(g for g in found if g)


def _turbo() -> bool | None:
    no_turbo = _read(_CPU / "intel_pstate" / "no_turbo")
    if no_turbo is not None:
        return no_turbo == "0"
    boost = _read(_CPU / "cpufreq" / "boost")
    return None if boost is None else boost == "1"


def _smt() -> bool | None:
    active = _read(_CPU / "smt" / "active")
    return None if active is None else active == "1"


def read_steal_seconds() -> float | None:
    """Cumulative CPU steal time of the machine (from /proc/stat), to spot a noisy hypervisor neighbour."""
    text = _read("/proc/stat")
    if not text:
        return None
    fields = text.splitlines()[0].split()
    if len(fields) < 9:
        return None
    return int(fields[8]) / os.sysconf("SC_CLK_TCK")


def parse_cpu_list(text: str) -> list[int]:
    """A kernel CPU list such as `2-3,6` (sysfs, `isolcpus=`) as sorted CPU numbers; empty text, none."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        try:
            cpus.update(range(int(first), int(last or first) + 1))
        except ValueError:
            raise ValueError(f"not a CPU list: {text.strip()!r}") from None
    return sorted(cpus)


def isolated_cpus() -> list[int]:
    """CPUs the kernel keeps free of other tasks (`isolcpus=` at boot), where a worker is least disturbed."""
    try:
        return parse_cpu_list(_read("/sys/devices/system/cpu/isolated") or "")
    except ValueError:
        return []


def machine_info(name: str | None = None) -> MachineInfo:
    memory = psutil.virtual_memory()
    swap = psutil.swap_memory()
    try:
        affinity = sorted(os.sched_getaffinity(0))
    except AttributeError:
        affinity = list(range(os.cpu_count() or 1))
    info: MachineInfo = {
        "name": name or os.environ.get("COLBENCH_MACHINE") or socket.gethostname(),
        "hostname": socket.gethostname(),
        "cpu_model": _cpu_model(),
        "architecture": platform.machine(),
        "cpu_cores": psutil.cpu_count(logical=False) or os.cpu_count(),
        "cpu_threads": psutil.cpu_count(logical=True),
        "cpus_allowed": affinity,
        "cpus_isolated": isolated_cpus(),
        "cpu_caches": _caches(),
        "cpu_governors": _governors(),
        "cpu_turbo": _turbo(),
        "cpu_smt": _smt(),
        "memory_bytes": memory.total,
        "swap_bytes": swap.total,
        "os": platform.system(),
        "os_release": _os_release(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "aslr": _read("/proc/sys/kernel/randomize_va_space"),
        "load_average": list(os.getloadavg()),
    }
    info["machine_id"] = fingerprint(info)
    return info


def _os_release() -> str | None:
    text = _read("/etc/os-release") or ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip('"')
    return None


def fingerprint(info: MachineInfo) -> str:
    """Hardware identity plus the user-given name: results are comparable only within one fingerprint."""
    key = "|".join(str(info.get(k)) for k in ("name", "cpu_model", "architecture", "cpu_cores", "cpu_threads"))
    key += f"|{round((info.get('memory_bytes') or 0) / 2**30)}GiB"
    return hashlib.sha256(key.encode()).hexdigest()[:12]


@dataclass
class Check:
    name: str
    ok: bool
    message: str


def environment_checks(info: MachineInfo) -> list[Check]:
    """One line per thing that makes timings noisy, with what to do about it."""
    checks: list[Check] = []
    governors = info.get("cpu_governors") or []
    if governors:
        ok = governors == ["performance"]
        advice = ": set 'performance' for stable clocks (cpupower frequency-set -g performance)"
        checks.append(Check("cpu_governor", ok, f"CPU governor {', '.join(governors)}" + ("" if ok else advice)))
    else:
        checks.append(Check("cpu_governor", True, "CPU governor not readable (virtual machine?)"))
    turbo = info.get("cpu_turbo")
    if turbo is not None:
        checks.append(Check("cpu_turbo", not turbo, "turbo boost on: clocks vary with load and heat; "
                            "disable it for stable timings" if turbo else "turbo boost off"))
    smt = info.get("cpu_smt")
    if smt is not None:
        checks.append(Check("cpu_smt", True, f"SMT {'on: sibling threads share a core' if smt else 'off'}"))
    if info.get("swap_bytes"):
        checks.append(Check("swap", False, f"swap enabled ({info['swap_bytes'] / 2**30:.1f} GiB): paging can "
                            "distort memory-heavy cases; `swapoff -a` while benchmarking"))
    else:
        checks.append(Check("swap", True, "no swap"))
    load = (info.get("load_average") or [0])[0]
    threads = info.get("cpu_threads") or 1
    checks.append(Check("load", load < 0.5 * threads,
                        f"load average {load:.2f} on {threads} CPUs"
                        + ("" if load < 0.5 * threads else ": other work is running; results will be noisy")))
    steal = read_steal_seconds()
    if steal is not None:
        checks.append(Check("steal", True, f"{steal:.1f} s CPU steal since boot (per-execution steal is recorded)"))
    if info.get("cpus_isolated"):
        checks.append(Check("isolated_cpus", True, f"isolated CPUs {info['cpus_isolated']}: workers run there when "
                            "colbench may use them"))
    else:
        checks.append(Check("isolated_cpus", True, "no isolated CPUs: for the quietest timings boot with "
                            "isolcpus=… (and nohz_full=…); colbench then pins workers there"))
    if info.get("aslr") not in (None, "2"):
        checks.append(Check("aslr", True, f"ASLR level {info['aslr']} (colbench leaves layout random on purpose)"))
    return checks


def checks_as_json(checks: list[Check]) -> list[EnvironmentCheck]:
    return [EnvironmentCheck(name=c.name, ok=c.ok, message=c.message) for c in checks]
