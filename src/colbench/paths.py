"""Where colbench keeps its files: everything under COLBENCH_HOME (default ~/.colbench)."""

from __future__ import annotations

import os
from pathlib import Path


def colbench_home() -> Path:
    return Path(os.environ.get("COLBENCH_HOME") or Path.home() / ".colbench").expanduser()


def data_dir() -> Path:
    """Downloaded sources, synthetic twins and the format cache."""
    return Path(os.environ.get("COLBENCH_DATA") or colbench_home() / "data").expanduser()


def envs_dir() -> Path:
    """uv environments for library-version comparisons."""
    return colbench_home() / "envs"


def default_store_url() -> str:
    return os.environ.get("COLBENCH_STORE") or str(colbench_home() / "results.duckdb")
