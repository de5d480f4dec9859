"""Wall or CPU time per case (basis.py), through the same path `compare` takes from stored results."""

import numpy as np

from colbench.analysis.basis import choose_basis, iteration_values
from colbench.analysis.comparison import case_inputs
from colbench.analysis.verdicts import CaseInput, Verdict, compare_suite
from colbench.model.records import Result, Side
from tests.records import make_result


def result(block: int, env: str, wall: list[float], cpu: list[float], run_delay: list[float] | None = None,
           threads: int = 1) -> Result:
    samples = {"wall_s": wall, "cpu_user_s": [0.9 * c for c in cpu], "cpu_sys_s": [0.1 * c for c in cpu]}
    if run_delay is not None:
        samples["run_delay_s"] = run_delay
    return make_result(run_id="r", case_id="c1", benchmark="placebo", params={"duration": 0.1, "threads": threads},
                       env_name=env, block=block, process_index=block, status="ok", machine_id="m",
                       threads={"requested": threads}, samples=samples)


def runs(rng, blocks: int, *, cpu_ratio: float = 1.0, wait_ratio: float = 1.0, busy: float = 0.98,
         preempt: float = 0.08, cores: float = 1.0, record_delay: bool = False) -> tuple[Side, Side]:
    """A CPU-bound case on a busy machine: CPU time varies 1%, wall time also counts 0..`preempt` of
    waiting for the CPU (the run delay, recorded when `record_delay`) and 1/busy - 1 of waiting for I/O.
    The contender's CPU work is scaled by `cpu_ratio`, its wall time by `wait_ratio`."""
    sides = {"A": [], "B": []}
    for b in range(blocks):
        for env in ("A", "B"):
            cpu = 0.2 * np.exp(rng.normal(0, 0.01, 5)) * (cpu_ratio if env == "B" else 1.0)
            preempted = rng.uniform(0, preempt, 5)
            wall = cpu / cores * (1 + preempted + (1 / busy - 1)) * (wait_ratio if env == "B" else 1.0)
            delay = list(cpu / cores * preempted) if record_delay else None
            sides[env].append(result(b, env, list(wall), list(cpu), delay, threads=2 if cores > 1 else 1))
    return Side("A", "r", "A", sides["A"]), Side("B", "r", "B", sides["B"])


def test_cpu_time_is_read_per_iteration():
    r = result(0, "A", [0.2, 0.21], [0.19, 0.2])
    assert iteration_values(r, "cpu") == [0.19, 0.2]
    assert iteration_values(r, "wall") == [0.2, 0.21]
    assert iteration_values(make_result(samples={"wall_s": [0.2]}), "cpu") is None  # not recorded


def test_quieter_cpu_time_is_chosen_for_a_one_core_case_and_swapping_sides_changes_nothing():
    rng = np.random.default_rng(70)
    inputs, _ = case_inputs(*runs(rng, 20))
    (case,) = inputs.values()
    assert case.basis == "cpu" and case.check is not None and case.check.basis == "wall"
    swapped = CaseInput(case.check.contender, case.check.baseline, baseline_blocks=case.check.contender_blocks,
                        contender_blocks=case.check.baseline_blocks)
    swapped_cpu = CaseInput(case.contender, case.baseline, baseline_blocks=case.contender_blocks,
                            contender_blocks=case.baseline_blocks)
    assert choose_basis(swapped, swapped_cpu)[0] == "cpu"


def test_wall_time_for_cases_that_wait_or_use_several_cores():
    rng = np.random.default_rng(71)
    waits, _ = case_inputs(*runs(rng, 12, busy=0.6))
    assert next(iter(waits.values())).basis == "wall" and next(iter(waits.values())).check is None
    multi, _ = case_inputs(*runs(rng, 12, cores=1.9))
    assert next(iter(multi.values())).basis == "wall"
    wall, cpu = (case_inputs(*runs(rng, 12, cores=1.9), basis=b)[0]["placebo duration=0.1 threads=2"]
                 for b in ("wall", "cpu"))
    assert "several threads" in choose_basis(wall, cpu, single_threaded=False)[1]
    assert "waits" in choose_basis(*(case_inputs(*runs(rng, 12, busy=0.6), basis=b)[0]["placebo duration=0.1 threads=1"]
                                     for b in ("wall", "cpu")))[1]
    forced, _ = case_inputs(*runs(rng, 12), basis="wall")
    assert next(iter(forced.values())).basis == "wall"


def test_cpu_time_catches_a_slowdown_that_wall_time_is_too_noisy_for():
    rng = np.random.default_rng(72)
    cpu_inputs, _ = case_inputs(*runs(rng, 12, cpu_ratio=1.05, preempt=0.6))
    wall_inputs, _ = case_inputs(*runs(np.random.default_rng(72), 12, cpu_ratio=1.05, preempt=0.6), basis="wall")
    (on_cpu,) = compare_suite(cpu_inputs)
    (on_wall,) = compare_suite(wall_inputs)
    assert on_cpu.basis == "cpu" and on_cpu.verdict == Verdict.REGRESSION
    assert on_wall.verdict == Verdict.INCONCLUSIVE
    assert on_cpu.mde_95 < on_wall.mde_95


def test_a_slowdown_that_is_pure_waiting_is_caught_by_the_wall_time_check():
    """CPU time cannot see waiting: when it is the basis, wall time is compared too, at half the level."""
    rng = np.random.default_rng(73)
    inputs, _ = case_inputs(*runs(rng, 30, wait_ratio=1.12, preempt=0.02))
    (case,) = inputs.values()
    assert case.basis == "cpu"
    (result_,) = compare_suite(inputs)
    assert result_.verdict == Verdict.REGRESSION and result_.basis == "wall"
    assert "wall-time check" in result_.reason


def test_on_a_crowded_machine_the_run_delay_tells_waiting_for_a_cpu_from_waiting_for_io():
    """The worker got a third of a CPU (wall = 3 x CPU time): without the run delay that looks like a case
    that waits, with it the case is CPU-bound and its quiet CPU time is compared."""
    rng = np.random.default_rng(74)
    crowded, _ = case_inputs(*runs(rng, 12, preempt=4.0))
    assert next(iter(crowded.values())).basis == "wall"
    explained, _ = case_inputs(*runs(rng, 12, preempt=4.0, record_delay=True))
    assert next(iter(explained.values())).basis == "cpu"
    # a case that waits for I/O half its time stays on wall time, run delay or not
    io_bound, _ = case_inputs(*runs(rng, 12, busy=0.5, preempt=0.2, record_delay=True))
    assert next(iter(io_bound.values())).basis == "wall"


def test_too_few_blocks_to_split_the_level_compare_wall_time_alone():
    """8 blocks reach p <= 0.01 (2/256) but not 0.005: a CPU view with its wall check would make a clear +30%
    "too few samples"; wall time alone decides it, and the reason says why. With 9 blocks both views stay."""
    rng = np.random.default_rng(7)

    def case(blocks: int) -> CaseInput:
        base = [[float(v) for v in 0.010 * np.exp(rng.normal(0, 0.01, 3))] for _ in range(blocks)]
        slow = [[float(v) for v in 0.013 * np.exp(rng.normal(0, 0.01, 3))] for _ in range(blocks)]
        index = list(range(blocks))
        # the rank test's resolution is what forces the choice (the t has no such limit)
        wall = CaseInput(base, slow, baseline_blocks=index, contender_blocks=index, basis="wall", test="rank")
        return CaseInput(base, slow, baseline_blocks=index, contender_blocks=index, basis="cpu", check=wall,
                         test="rank")

    (eight,) = compare_suite({"c": case(8)}, alpha=0.01)
    assert eight.verdict == Verdict.REGRESSION and "wall time alone" in eight.reason, eight.reason
    (nine,) = compare_suite({"c": case(9)}, alpha=0.01)
    assert nine.verdict == Verdict.REGRESSION and "wall time alone" not in nine.reason, nine.reason
