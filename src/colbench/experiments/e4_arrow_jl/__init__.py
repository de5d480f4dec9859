"""E4 — Arrow.jl vs CSV.jl (2020): Swift as an Arrow.jl (Bogumił Kamiński, 2020)."""

from colbench.experiments.base import Experiment
from colbench.experiments.e4_arrow_jl.suite import E4

EXPERIMENT = Experiment(
    key="e4",
    package=__name__,
    title="E4 — Arrow.jl vs CSV.jl (2020)",
    post="Swift as an Arrow.jl (Bogumił Kamiński, 2020)",
    url='https://bkamins.github.io/julialang/2020/11/06/arrow.html',
    suites=(E4,),
)
