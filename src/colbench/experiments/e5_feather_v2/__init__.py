"""E5 — Feather V2 vs Parquet (2020): Feather V2 with Compression Support in Apache Arrow 0.17.0 (Ursa Labs, 2020)."""

from colbench.experiments.base import Experiment
from colbench.experiments.e5_feather_v2.suite import E5

EXPERIMENT = Experiment(
    key="e5",
    package=__name__,
    title="E5 — Feather V2 vs Parquet (2020)",
    post="Feather V2 with Compression Support in Apache Arrow 0.17.0 (Ursa Labs, 2020)",
    url='https://ursalabs.org/blog/2020-feather-v2/',
    suites=(E5,),
)
