from __future__ import annotations

import pytest

from colbench.model.params import Grid, Param, ParamError, parse_param_option, positive
from colbench.runner.plan import PlanError, make_plan


def make_grid() -> Grid:
    return Grid((
        Param("fmt", default=("csv", "parquet"), choices=("csv", "parquet", "feather")),
        Param("rows", default=(10,), type=int, check=positive),
        Param("flag", default=(True,), type=bool),
    ))


def test_expand_is_the_full_product_in_declared_order():
    grid = make_grid()
    cases = grid.expand(grid.choose({"rows": ["1", "2"]}))
    assert cases == [
        {"fmt": "csv", "rows": 1, "flag": True}, {"fmt": "csv", "rows": 2, "flag": True},
        {"fmt": "parquet", "rows": 1, "flag": True}, {"fmt": "parquet", "rows": 2, "flag": True},
    ]


def test_text_values_are_typed_and_deduplicated():
    chosen = make_grid().choose({"flag": ["false", "0", "no"], "rows": ["3", "3"]})
    assert chosen["flag"] == [False] and chosen["rows"] == [3]


@pytest.mark.parametrize("overrides, message", [
    ({"fmt": ["orc"]}, "choose from csv, parquet, feather"),
    ({"rows": ["ten"]}, "not a valid int"),
    ({"rows": ["-1"]}, "must be > 0"),
    ({"nope": ["1"]}, "unknown param 'nope'"),
])
def test_bad_values_are_refused_with_a_reason(overrides, message):
    with pytest.raises(ParamError, match=message):
        make_grid().choose(overrides)


@pytest.mark.parametrize("value", [[1, 2], {"a": 1}, (1,)])
def test_a_typed_value_that_is_not_a_scalar_is_refused(value):
    """A suite file gives values already typed: a list or a table where one value belongs is a ParamError naming
    the param (it used to pass into the case, or fail later as an unhashable TypeError)."""
    grid = Grid((Param("label", default=("a",)),))
    with pytest.raises(ParamError, match=r"param 'label': .* is not a string, number or boolean"):
        grid.choose({"label": [value]})
    assert grid.choose({"label": ["b", 2, 1.5, False, None]})["label"] == ["b", 2, 1.5, False, None]


def test_param_option_syntax():
    assert parse_param_option("threads=1,2") == ("threads", ["1", "2"])
    with pytest.raises(ParamError, match="NAME=VALUE"):
        parse_param_option("threads")


def test_plan_adds_framework_params_and_stable_case_ids():
    plan = make_plan(["placebo"], {"duration": ["0.001", "0.002"]})
    assert [c.params["duration"] for c in plan.cases] == [0.001, 0.002]
    assert all({"threads", "allocator", "cache"} <= set(c.params) for c in plan.cases)
    again = make_plan(["placebo"], {"duration": ["0.001", "0.002"]})
    assert [c.case_id for c in plan.cases] == [c.case_id for c in again.cases]
    assert len({c.case_id for c in plan.cases}) == 2


def test_validity_filter_drops_combinations(monkeypatch):
    from colbench.benchmarks.placebo import Placebo

    monkeypatch.setattr(Placebo, "valid", lambda self, p: "pointless" if p["error"] == "junk" else None)
    plan = make_plan(["placebo"], {"error": ["none", "junk"]})
    assert [c.params["error"] for c in plan.cases] == ["none"]
    assert plan.dropped and plan.dropped[0][2] == "pointless"


def test_unknown_targets_and_params_fail_the_plan():
    with pytest.raises(PlanError, match="unknown benchmark or suite 'placeb'.*did you mean 'placebo'"):
        make_plan(["placeb"])
    with pytest.raises(PlanError, match="unknown param 'speed'"):
        make_plan(["placebo"], {"speed": ["1"]})


@pytest.mark.parametrize("overrides, hint", [
    ({"fmt": ["parqet"]}, "(did you mean 'parquet'?)"),
    ({"fmt": ["CSV"]}, "(did you mean 'csv'?)"),
    ({"fmts": ["csv"]}, "(did you mean 'fmt'?)"),
    ({"fmt": ["zzzzzz"]}, None),
    ({"fmt": ["parqet" * 5000]}, None),  # no hint for a 30,000-character value, and the value is clipped
])
def test_a_near_miss_gets_a_did_you_mean(overrides, hint):
    with pytest.raises(ParamError) as refused:
        make_grid().choose(overrides)
    message = str(refused.value)
    assert ("did you mean" in message) == (hint is not None) and (hint is None or message.endswith(hint)), message
    assert len(message) < 1000


def test_a_misspelt_param_of_a_plan_gets_a_did_you_mean():
    with pytest.raises(PlanError, match=r"params here: .* \(did you mean 'reader'\?\)$"):
        make_plan(["csv-read"], {"reder": ["polars"]})
