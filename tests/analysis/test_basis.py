"""Wall or CPU time per case (basis.py), through the same path `compare` takes from stored results."""

import numpy as np

from colbench.analysis.basis import choose_basis, iteration_values
from colbench.analysis.compare import CaseInput, Verdict, compare_suite
from colbench.analysis.sides import case_inputs
from colbench.model.records import Side


def result(block: int, env: str, wall: list[float], cpu: list[float]) -> dict:
    return {"run_id": "r", "case_id": "c1", "benchmark": "placebo", "params": {"duration": 0.1},
            "env_name": env, "block": block, "process_index": block, "status": "ok", "machine_id": "m",
            "samples": {"wall_s": wall, "cpu_user_s": [0.9 * c for c in cpu], "cpu_sys_s": [0.1 * c for c in cpu]}}


def runs(rng, blocks: int, *, cpu_ratio: float = 1.0, wait_ratio: float = 1.0, busy: float = 0.98,
         preempt: float = 0.08, cores: float = 1.0) -> tuple[Side, Side]:
    """A CPU-bound case on a busy machine: CPU time varies 1%, wall time also counts 0..`preempt` of
    waiting for the CPU. The contender's CPU work is scaled by `cpu_ratio`, its waiting by `wait_ratio`."""
    sides = {"A": [], "B": []}
    for b in range(blocks):
        for env in ("A", "B"):
            cpu = 0.2 * np.exp(rng.normal(0, 0.01, 5)) * (cpu_ratio if env == "B" else 1.0)
            stolen = rng.uniform(0, preempt, 5) + (1 / busy - 1)
            wall = cpu / cores * (1 + stolen) * (wait_ratio if env == "B" else 1.0)
            sides[env].append(result(b, env, list(wall), list(cpu)))
    return Side("A", "r", "A", sides["A"]), Side("B", "r", "B", sides["B"])


def test_cpu_time_is_read_per_iteration():
    r = result(0, "A", [0.2, 0.21], [0.19, 0.2])
    assert iteration_values(r, "cpu") == [0.19, 0.2]
    assert iteration_values(r, "wall") == [0.2, 0.21]
    assert iteration_values({"samples": {"wall_s": [0.2]}}, "cpu") is None  # not recorded


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
    reason = choose_basis(*[case_inputs(*runs(rng, 12, cores=1.9), basis=b)[0]["placebo duration=0.1"]
                            for b in ("wall", "cpu")])[1]
    assert "several cores" in reason
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
