"""E2 — Data Science I/O baseline (2019): Data Science I/O - A baseline benchmark for 2019 (Uwe L. Korn, 2019)."""

from colbench.experiments.base import Experiment
from colbench.experiments.e2_dsib.suite import E2

EXPERIMENT = Experiment(
    key="e2",
    package=__name__,
    title="E2 — Data Science I/O baseline (2019)",
    post="Data Science I/O - A baseline benchmark for 2019 (Uwe L. Korn, 2019)",
    url=None,
    suites=(E2,),
)
