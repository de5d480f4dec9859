"""Data sets for the benchmarks: known sources, synthetic twins and the format cache.

Modules, one concern each: ``sources`` (registry of real data sets and user sources), ``download``
(resumable, verified downloads), ``synth`` (one generator per twin or frame), ``textfmt`` (vectorised
number/date formatting), ``variants`` (DSIB str/cat), ``csvio`` (reading CSV back as typed Arrow),
``formats`` (writers per format and codec), ``manifest`` (per-file entries), ``cache`` (``materialize``,
estimates, prepare, clean). See docs/data.md.
"""

from colbench.data.errors import DataError

__all__ = ["DataError"]
