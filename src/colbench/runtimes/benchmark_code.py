"""A benchmark's code in every environment colbench builds for it, without the user naming it again (docs/asv.md).

Two ways:
- what a source needs installed (asv's runner for an asv suite, pytest for pytest files) is named by the plan
  (`runner.plan.Plan.requirements`) and carried by every environment request made for it
  (`EnvRequest.benchmark_requirements`: run's `--env`, `--versions`, bisect and watch), and
  `python.resolve_requirements` installs it unless the spec pins the package itself;
- a third-party package that registers colbench benchmarks or suites (a plugin, docs/writing-benchmarks.md) is
  grafted in: its files (its modules and its metadata, so the worker's entry points find it; or, installed
  editable, its source folder) copied once into a folder of the home, which a `.pth` file in the environment's
  site-packages names. It is not installed by requirement: it depends on colbench, which is on no package index (the
  environments reach colbench through their own `.pth`), and its other requirements are the libraries under test,
  which the environment pins.
Whether each environment then imports what the run's benchmarks need is checked before the run
(`runner.plan.fit_plan_to_envs`, `missing_in`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from colbench.paths import envs_dir, owned, owned_dir, write_text

PLUGINS_PTH = "_colbench_plugins.pth"


def _plugin_dists() -> list[Any]:
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    for group in ("colbench.benchmarks", "colbench.suites"):
        for ep in entry_points(group=group):
            dist = ep.dist
            if dist is not None and dist.metadata["Name"] and dist.metadata["Name"].lower() != "colbench":
                found.setdefault(dist.metadata["Name"], dist)
    return list(found.values())


def _copy_dist(dist: Any, dest: Path, pth_lines: list[str]) -> None:
    """A distribution's files under its site-packages (not its scripts) into `dest`; its .pth files' lines kept."""
    for file in dist.files or ():
        parts = Path(str(file)).parts
        if not parts or parts[0] == ".." or "__pycache__" in parts:
            continue
        source = Path(str(dist.locate_file(file)))
        if not source.is_file():
            continue
        if source.suffix == ".pth":  # an editable install: its source folder, or its import hook
            pth_lines += [line.strip() for line in source.read_text().splitlines() if line.strip()]
            continue
        target = dest.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _fingerprint(dists: list[Any]) -> str:
    digest = hashlib.sha256()
    for dist in sorted(dists, key=lambda d: str(d.metadata["Name"])):
        digest.update(f"{dist.metadata['Name']}=={dist.version}".encode())
        for file in dist.files or ():
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                stat = path.stat()
                digest.update(f"{file}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def plugin_folder() -> tuple[Path | None, list[str]]:
    """The folder holding the plugins' copies (made once per their content), and the lines of their own .pth."""
    dists = _plugin_dists()
    if not dists:
        return None, []
    root = envs_dir() / ".plugins"
    folder = root / _fingerprint(dists)
    lines_file = folder / "pth-lines.json"
    if not lines_file.is_file():
        owned_dir(root, "plugins folder")
        tmp = owned(root / f".tmp-{folder.name}", "plugins folder")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        lines: list[str] = []
        for dist in dists:
            _copy_dist(dist, tmp, lines)
        write_text(tmp / "pth-lines.json", json.dumps(lines), "plugin paths")
        shutil.rmtree(folder, ignore_errors=True)
        tmp.rename(folder)
    return folder, list(json.loads(lines_file.read_text()))


def graft_plugins(site_packages: Path) -> None:
    """Name the plugins' folder (and their editable installs' lines) in the environment's PLUGINS_PTH; remove it
    when colbench's environment has no plugin."""
    folder, lines = plugin_folder()
    pth = site_packages / PLUGINS_PTH
    if folder is None:
        pth.unlink(missing_ok=True)
        return
    write_text(pth, "\n".join([str(folder), *lines]) + "\n", "plugins' path file")


PROBE = """
import importlib, json, sys
failed = {}
for key in json.loads(sys.argv[1]):
    kind, _, name = key.partition(":")
    try:
        if kind == "module":
            importlib.import_module(name)
        else:
            from colbench.benchmarks.registry import get_benchmark
            get_benchmark(name)
    except BaseException as exc:
        failed[key] = (type(exc).__name__ + ": " + str(exc)).splitlines()[0][:300]
print(json.dumps(failed))
"""


def missing_in(python: str, probe: dict[str, str], variables: dict[str, str] | None = None) -> dict[str, str]:
    """What of `probe` (`module:NAME` or `benchmark:NAME` → what it is for) the interpreter cannot import, with why,
    under the environment's own variables (as its workers run)."""
    if not probe:
        return {}
    import os

    try:
        proc = subprocess.run([python, "-c", PROBE, json.dumps(sorted(probe))], capture_output=True, text=True,
                              timeout=300, stdin=subprocess.DEVNULL, check=False,
                              env={**os.environ, **(variables or {})})
        return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {key: "the interpreter did not answer the import check" for key in probe}
