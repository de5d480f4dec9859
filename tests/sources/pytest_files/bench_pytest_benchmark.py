"""A pytest-benchmark file as its users write it (the `benchmark` fixture, plain and pedantic, parametrized);
colbench runs it as cases (tests/sources/test_pytest_source.py). Not collected by colbench's own test run: its name
does not start with test_."""
import pytest
from probe_lib import work


def test_plain(benchmark):
    result = benchmark(work, 2000)
    assert result >= 0


@pytest.mark.parametrize("units", [1000, 4000])
@pytest.mark.parametrize("kind", ["a", "b"])
def test_parametrized(benchmark, units, kind):
    benchmark(work, units if kind == "a" else units * 2)


def test_pedantic(benchmark):
    def setup():
        return (3000,), {}

    benchmark.pedantic(work, setup=setup, rounds=5, iterations=1)


def test_not_a_benchmark():
    assert work(10) >= 0


def test_fails_after(benchmark):
    benchmark(work, 10)
    raise AssertionError("fails after its benchmark on purpose")
