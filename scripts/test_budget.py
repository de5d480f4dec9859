"""The test suite's time budget, checked in CI from the JUnit XML files pytest writes (`--junitxml`).

    python scripts/test_budget.py --fast fast.xml --slow slow.xml

CI runs the suite as two pytest sessions, the fast tier (`-m "not slow"`) and then the rest (`-m slow`): every test
once, and the fast tier's own time measured. This prints the 25 slowest tests of both and the suite's total (the
sum of the two sessions' wall times), and fails (exit 1) when the fast tier took longer than its budget (3 minutes)
or the whole suite longer than its budget (35 minutes: 20 before the round that added asv suites, counting servers
and Dask clusters, 45 during it, 35 since part of it was won back: about 20 minutes measured at low load) on the
reference VM, so the suite cannot grow further unseen while it is made cheaper again (the README's goal is 15
minutes, 2 for the fast tier). It also fails when a package of colbench has no test in the fast tier (the fast
tier touches every package).

A session's time is the wall time pytest measured for it (the JUnit suite's `time`); a test's time is its own (setup,
call and teardown), so with several xdist workers the tests' times add up to more than the session's.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ROOT / "src" / "colbench"


@dataclass(frozen=True)
class Case:
    nodeid: str
    seconds: float
    outcome: str  # passed, failed, error, skipped


@dataclass(frozen=True)
class Session:
    wall_s: float
    cases: list[Case]


def minutes(text: str) -> float:
    """'20m', '20', '90s' as seconds."""
    value = text.strip().lower()
    if value.endswith("s"):
        return float(value[:-1])
    return float(value.removesuffix("m")) * 60


def read_session(path: Path) -> Session:
    root = ElementTree.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    wall = sum(float(s.get("time", 0)) for s in suites)
    cases = []
    for suite in suites:
        for case in suite.iter("testcase"):
            module = (case.get("classname") or "").replace(".", "/")
            outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
            cases.append(Case(f"{module}.py::{case.get('name')}", float(case.get("time", 0)), outcome))
    return Session(wall, cases)


def packages() -> list[str]:
    return sorted(p.name for p in PACKAGES.iterdir() if p.is_dir() and (p / "__init__.py").exists())


def untouched(fast: Session) -> list[str]:
    """Packages of colbench with no passing test under tests/<package>/ in the fast tier."""
    tested = {c.nodeid.split("/")[1] for c in fast.cases if c.outcome == "passed" and c.nodeid.count("/") >= 2}
    return [p for p in packages() if p not in tested]


def clock(seconds: float) -> str:
    return f"{int(seconds // 60)}:{seconds % 60:04.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", type=Path, required=True, help="JUnit XML of the fast tier (-m 'not slow')")
    parser.add_argument("--slow", type=Path, help="JUnit XML of the rest (-m slow): the suite is both")
    parser.add_argument("--fast-budget", default="3m", help="the fast tier's budget (default 3m)")
    parser.add_argument("--budget", default="35m", help="the whole suite's budget (default 35m)")
    parser.add_argument("--top", type=int, default=25, help="how many of the slowest tests to print (default 25)")
    args = parser.parse_args(argv)

    fast = read_session(args.fast)
    slow = read_session(args.slow) if args.slow else Session(0.0, [])
    cases = sorted(fast.cases + slow.cases, key=lambda c: c.seconds, reverse=True)
    print(f"the {min(args.top, len(cases))} slowest tests (setup + call + teardown):")
    for case in cases[: args.top]:
        print(f"  {case.seconds:8.1f} s  {case.nodeid}{'' if case.outcome == 'passed' else f'  ({case.outcome})'}")
    total = fast.wall_s + slow.wall_s
    print(f"fast tier: {len(fast.cases)} tests in {clock(fast.wall_s)} (budget {clock(minutes(args.fast_budget))})")
    if args.slow:
        print(f"slow tier: {len(slow.cases)} tests in {clock(slow.wall_s)}")
        print(f"the suite: {len(fast.cases) + len(slow.cases)} tests in {clock(total)} "
              f"(budget {clock(minutes(args.budget))})")

    failures = []
    if fast.wall_s > minutes(args.fast_budget):
        failures.append(f"the fast tier took {clock(fast.wall_s)}, over its budget of "
                        f"{clock(minutes(args.fast_budget))}")
    if args.slow and total > minutes(args.budget):
        failures.append(f"the suite took {clock(total)}, over its budget of {clock(minutes(args.budget))}")
    missing = untouched(fast)
    if missing:
        failures.append(f"the fast tier has no passing test of {', '.join(missing)} (tests/<package>/)")
    for failure in failures:
        print(f"test budget: {failure}: make the slowest tests above cheaper (docs/architecture.md, Tests)",
              file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
