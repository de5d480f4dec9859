"""`scipy.stats`, imported when a statistic first needs it, not when a module that may need one is imported.

Importing scipy.stats costs about 0.6-1 s of CPU (its distributions are built at import), more than the rest of
colbench's command line together, and most commands never reach a statistic of it (a run of one environment, `show`,
`list`, a refused input): every `colbench` process paid it because the analysis modules imported it at their top.
`stats` stands in for the module in those modules (`from colbench.analysis.scipy_stats import stats as sps`) and
imports it at its first attribute."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyStats:
    """The `scipy.stats` module, imported at the first attribute asked of it (the import lock makes a first use
    from two threads import it once)."""

    _module: ModuleType | None = None

    def __getattr__(self, name: str) -> Any:
        module = _LazyStats._module
        if module is None:
            module = _LazyStats._module = importlib.import_module("scipy.stats")
        return getattr(module, name)


stats: Any = _LazyStats()
