"""The closing lines of a run with sides: each inconclusive comparison once, naming its pair in a sweep."""

from __future__ import annotations

import math

import pytest

from colbench.analysis.verdicts import CaseComparison, Verdict
from colbench.cli.run_cmd import print_session
from colbench.runner.session import SessionResult


def _inconclusive(label: str) -> CaseComparison:
    return CaseComparison(key=label, metric="instructions", direction="lower_is_better", verdict=Verdict.INCONCLUSIVE,
                          reason="too few samples", ratio=1.3, ci_low=math.nan, ci_high=math.nan, ci_level=0.99,
                          p_value=1.0, p_adjusted=1.0, paired=True, n_baseline=1, n_contender=1, n_blocks=1,
                          baseline_median=1.0,
                          contender_median=1.3, baseline_cv=0, contender_cv=0, threshold=0.0025, alpha=0.01,
                          method="holm")


@pytest.mark.parametrize(("contenders", "pairs"), [(["19.0.1"], [""]),
                                                   (["19.0.1", "20.0.0"], [" (19.0.1 vs 18.1.0)",
                                                                           " (20.0.0 vs 18.1.0)"])])
def test_each_inconclusive_line_names_its_pair_in_a_sweep(capsys: pytest.CaptureFixture[str], contenders: list[str],
                                                         pairs: list[str]) -> None:
    session = SessionResult(run=None, baseline="18.1.0",  # type: ignore[arg-type]
                            comparisons={c: [_inconclusive("file-read rows=200000")] for c in contenders},
                            notes=[], looks=[], elapsed_s=12.0, stopped="fixed")
    print_session(session)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("inconclusive ")]
    assert [line.split(":")[0] for line in lines] == [f"inconclusive file-read rows=200000{p}" for p in pairs]
