"""E1 — arrowbench CSV readers (R, 2021): Measuring and Monitoring Arrow's Performance:
Some Updated R Benchmarks (Ursa Labs, 2021)."""

from colbench.experiments.base import Experiment
from colbench.experiments.e1_csv_readers.suite import ALLOCATOR, E1, E1_ALL

EXPERIMENT = Experiment(
    key="e1",
    package=__name__,
    title="E1 — arrowbench CSV readers (R, 2021)",
    post="Measuring and Monitoring Arrow's Performance: Some Updated R Benchmarks (Ursa Labs, 2021)",
    url='https://ursalabs.org/blog/2021-r-benchmarks-part-1/',
    suites=(E1, E1_ALL, ALLOCATOR),
)
