"""E3 — Arrow Java in-memory read bandwidth (2018):
Investigating performance of Apache Arrow in-memory (Animesh Trivedi, 2018)."""

from colbench.experiments.base import Experiment
from colbench.experiments.e3_ipc_bandwidth.suite import E3

EXPERIMENT = Experiment(
    key="e3",
    package=__name__,
    title="E3 — Arrow Java in-memory read bandwidth (2018)",
    post="Investigating performance of Apache Arrow in-memory (Animesh Trivedi, 2018)",
    url=None,
    suites=(E3,),
)
