"""Which CPUs a worker is pinned to: the kernel's isolated CPUs when there are enough, else the first allowed."""

from __future__ import annotations

import os

import pytest

from colbench.machine.facts import environment_checks, machine_info, parse_cpu_list
from colbench.runner.isolate import choose_cpus, usable_isolated_cpus


@pytest.mark.parametrize("text, cpus", [("", []), ("\n", []), ("3", [3]), ("2-3,6", [2, 3, 6]),
                                        ("0-1,1-2\n", [0, 1, 2]), ("8,4-5", [4, 5, 8])])
def test_kernel_cpu_lists_parse(text, cpus):
    assert parse_cpu_list(text) == cpus


def test_a_garbled_cpu_list_says_so():
    with pytest.raises(ValueError, match="not a CPU list: '2-x'"):
        parse_cpu_list("2-x")


def test_enough_isolated_cpus_are_preferred():
    assert choose_cpus(1, isolated=[5, 7]) == ([5], None)
    assert choose_cpus(2, isolated=[5, 7]) == ([5, 7], None)


def test_too_few_isolated_cpus_fall_back_to_the_allowed_ones():
    allowed = sorted(os.sched_getaffinity(0))
    assert choose_cpus(1, isolated=[]) == (allowed[:1], None)
    cpus, warning = choose_cpus(len(allowed) + 1, isolated=[allowed[0]])
    assert cpus == allowed and f"{len(allowed) + 1} threads requested on {len(allowed)} CPUs" in warning


def test_this_machine_s_isolated_cpus_are_reported_and_usable_ones_leave_affinity_alone():
    before = os.sched_getaffinity(0)
    info = machine_info()
    usable = usable_isolated_cpus()
    assert os.sched_getaffinity(0) == before
    assert set(usable) <= set(info["cpus_isolated"])
    (check,) = [c for c in environment_checks(info) if c.name == "isolated_cpus"]
    if info["cpus_isolated"]:
        assert str(info["cpus_isolated"]) in check.message
    else:
        assert "isolcpus=" in check.message
