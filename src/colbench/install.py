"""How this colbench was installed, and the command that adds an extra or a package *there*.

Advice such as "pip install 'colbench[serve]'" is wrong for most users: in a checkout the command is
`uv sync --extra serve`; after `uv tool install colbench-0.1.0-py3-none-any.whl` it is a `uv tool install` of the
same wheel with the extra (colbench is not on the package index, so `colbench[serve]` alone would not resolve);
under pipx a `pipx install --force` of the same source; in a plain environment that environment's own pip (or
`uv pip` when uv made the environment and it has no pip). The facts come from what each installer leaves behind:
uv's `uv-receipt.toml` and pipx's `pipx_metadata.json` in the environment, PEP 610's `direct_url.json` and the
`INSTALLER` file in colbench's own dist-info, and a `pyproject.toml` beside an editable source tree.
"""

from __future__ import annotations

import json
import shlex
import sys
import tomllib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse

Kind = Literal["checkout", "uv-tool", "pipx", "pip"]
#: uv is a tool on PATH, not a package of colbench's environment: the same advice for every install
INSTALL_UV = "curl -LsSf https://astral.sh/uv/install.sh | sh, or: pipx install uv"


@dataclass(frozen=True)
class Install:
    """Where colbench runs from. `source`: what was installed (a wheel's path, a URL, or "colbench");
    `extras`: the extras already asked for; `python`: the interpreter of the environment; `checkout`: the source
    tree of an editable install; `installer`: the tool that installed it into a plain environment ("pip", "uv");
    `with_requirements`: what a `uv tool install --with` added beside colbench (a reinstall must name them again,
    or it drops them)."""

    kind: Kind
    source: str = "colbench"
    extras: tuple[str, ...] = ()
    python: str = sys.executable
    checkout: Path | None = None
    installer: str = "pip"
    with_requirements: tuple[str, ...] = ()

    def add_extra(self, extra: str) -> str:
        """The one command that makes `colbench[extra]` importable in this install."""
        return self.add_extras((extra,))

    def add_extras(self, extras: tuple[str, ...] | list[str]) -> str:
        """The one command that makes every one of `extras` importable, keeping the extras (and, for a uv tool,
        the `--with` packages) already there: a `uv tool install --reinstall` of `colbench[serve]` after one of
        `colbench[postgres]` would drop postgres."""
        if self.kind == "checkout":
            return "uv sync --all-extras" + (f"  (in {self.checkout})" if self.checkout else "")
        spec = _with_extras(self.source, (*self.extras, *extras))
        if self.kind == "uv-tool":
            return f"uv tool install --reinstall {shlex.quote(spec)}{self._withs()}"
        if self.kind == "pipx":
            return f"pipx install --force {shlex.quote(spec)}"
        return self._pip_install(spec)

    def _withs(self, *more: str) -> str:
        return "".join(f" --with {shlex.quote(r)}" for r in dict.fromkeys((*self.with_requirements, *more)))

    def add_package(self, package: str) -> str:
        """The one command that installs a Python package (an engine such as polars) beside colbench."""
        if self.kind == "checkout":
            return f"uv pip install {shlex.quote(package)}" + (f"  (in {self.checkout})" if self.checkout else "")
        if self.kind == "uv-tool":
            spec = _with_extras(self.source, self.extras)
            return f"uv tool install --reinstall {shlex.quote(spec)}{self._withs(package)}"
        if self.kind == "pipx":
            return f"pipx inject colbench {shlex.quote(package)}"
        return self._pip_install(package)

    def _pip_install(self, spec: str) -> str:
        if self.installer == "uv" and not _has_pip(self.python):
            return f"uv pip install --python {shlex.quote(self.python)} {shlex.quote(spec)}"
        return f"{shlex.quote(self.python)} -m pip install {shlex.quote(spec)}"


def _with_extras(source: str, extras: tuple[str, ...]) -> str:
    unique = sorted(dict.fromkeys(e for e in extras if e))
    return f"{source}[{','.join(unique)}]" if unique else source


def _has_pip(python: str) -> bool:
    return python == sys.executable and _module_exists("pip")


def _module_exists(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def _file_url_path(url: str) -> str:
    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme == "file" else url


def _distribution() -> metadata.Distribution | None:
    try:
        return metadata.distribution("colbench")
    except metadata.PackageNotFoundError:
        return None


def _direct_url(dist: metadata.Distribution | None) -> dict[str, object]:
    text = dist.read_text("direct_url.json") if dist is not None else None
    try:
        loaded = json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _uv_receipt(prefix: Path) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """The source and extras `uv tool install` recorded for colbench, and the other requirements it installed
    with it (`--with`), from the tool environment's receipt."""
    try:
        receipt = tomllib.loads((prefix / "uv-receipt.toml").read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return None
    source = "colbench"
    extras: tuple[str, ...] = ()
    withs: list[str] = []
    for requirement in receipt.get("tool", {}).get("requirements", []):
        if not isinstance(requirement, dict):
            continue
        where = requirement.get("path") or requirement.get("url") or requirement.get("directory")
        if requirement.get("name") == "colbench":
            source = str(where or "colbench")
            extras = tuple(str(e) for e in requirement.get("extras", []))
        elif requirement.get("name"):
            withs.append(str(where or f"{requirement['name']}{requirement.get('specifier') or ''}"))
    return source, extras, tuple(withs)


def _pipx_metadata(prefix: Path) -> tuple[str, tuple[str, ...]] | None:
    try:
        meta = json.loads((prefix / "pipx_metadata.json").read_text())
    except (OSError, json.JSONDecodeError):
        return None
    main = meta.get("main_package") or {}
    source = str(main.get("package_or_url") or "colbench")
    extras: tuple[str, ...] = ()
    if source.endswith("]") and "[" in source:  # pipx keeps the spec as given: "colbench-0.1.0-….whl[serve]"
        source, _, bracket = source[:-1].rpartition("[")
        extras = tuple(e.strip() for e in bracket.split(",") if e.strip())
    return source, extras


def _checkout(dist: metadata.Distribution | None, direct: dict[str, object]) -> Path | None:
    """The source tree of an editable install, or the tree this module is imported from when that is a checkout."""
    dir_info = direct.get("dir_info")
    if isinstance(dir_info, dict) and dir_info.get("editable") and isinstance(direct.get("url"), str):
        return Path(_file_url_path(str(direct["url"])))
    here = Path(__file__).resolve()
    for parent in here.parents[:3]:
        if (parent / "pyproject.toml").is_file() and (parent / "src" / "colbench").is_dir():
            return parent
    return None if dist is not None else here.parents[2]


def detect(prefix: Path | None = None) -> Install:
    """How the running colbench was installed. `prefix`: the environment's root (sys.prefix by default)."""
    root = Path(prefix or sys.prefix)
    python = sys.executable
    dist = _distribution()
    direct = _direct_url(dist)
    checkout = _checkout(dist, direct)
    if checkout is not None:
        return Install("checkout", python=python, checkout=checkout)
    receipt = _uv_receipt(root)
    if receipt is not None:
        return Install("uv-tool", source=receipt[0], extras=receipt[1], python=python, with_requirements=receipt[2])
    pipx = _pipx_metadata(root)
    if pipx is not None:
        return Install("pipx", source=pipx[0], extras=pipx[1], python=python)
    url = direct.get("url")
    source = _file_url_path(url) if isinstance(url, str) else "colbench"
    installer = (dist.read_text("INSTALLER") or "pip").strip() if dist is not None else "pip"
    return Install("pip", source=source, python=python, installer=installer or "pip")


def add_extra(extra: str) -> str:
    """`detect().add_extra(extra)`: for messages."""
    return detect().add_extra(extra)


def add_package(package: str) -> str:
    """`detect().add_package(package)`: for messages."""
    return detect().add_package(package)
