"""A pytest-codspeed file as its users write it (`@pytest.mark.benchmark`: the test body is timed); colbench runs it
as cases (tests/sources/test_pytest_source.py)."""
import pytest
from probe_lib import work


@pytest.mark.benchmark
def test_marked():
    work(2500)


@pytest.mark.benchmark
@pytest.mark.parametrize("units", [500, 1500])
def test_marked_parametrized(units, tmp_path):
    work(units)
    (tmp_path / "x").write_text("x")


def test_plain_test():
    assert True
