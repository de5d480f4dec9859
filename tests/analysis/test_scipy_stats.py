"""scipy.stats is imported at a statistic's first use, not with the analysis modules (analysis/scipy_stats.py): a
command that computes none (a run of one environment, `show`) does not pay its import, about a second of CPU."""

from __future__ import annotations

import subprocess
import sys

ANALYSIS = ("claims", "chain", "sequential", "t_tests", "rank_tests", "power", "verdicts", "comparison", "history")


def test_the_analysis_modules_import_without_scipy_stats_and_the_first_statistic_imports_it():
    code = ("import sys\n"
            f"for name in {ANALYSIS!r}: __import__('colbench.analysis.' + name)\n"
            "import colbench.app.claims, colbench.cli.main\n"
            "print('scipy.stats' in sys.modules)\n"
            "from colbench.analysis.scipy_stats import stats\n"
            "print(round(float(stats.norm.isf(0.025)), 4), 'scipy.stats' in sys.modules)\n"
            "print(stats.t is sys.modules['scipy.stats'].t)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "1.96", "True", "True"]
