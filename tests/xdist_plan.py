"""How the suite shares the machine's CPUs: pytest-xdist workers (`-n auto --dist loadgroup` in pyproject's
addopts; `-n 0` runs in one process), with three rules applied to each collected test (`group_tests`):

- a test marked `serial` times something and asserts on what it measured (a verdict, a step, a budget): it joins
  the group "serial", which runs after every other test has finished, alone on one worker (`SerialLast`), so no
  other test competes with it for a CPU;
- a test that uses a module-scoped fixture joins its module's group: one worker builds the fixture once, as a
  plain `pytest` run does (split across two workers, a store of real runs would be built twice);
- every other test is a unit of its own, given to whichever worker is free.

What several modules read (stores of real runs, the Java worker's jar) is built once for all workers by
`tests.shared.built_once`. Units are handed out in collection order, which `group_tests` makes slow units first
(larger groups before smaller), the fast ones after, the serial group last (`--no-loadscope-reorder` keeps it), so
no long test starts at the end while the other worker idles.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadGroupScheduling

SERIAL = "serial"


def _module_fixtures(item: pytest.Item) -> set[tuple[str, str]]:
    """(module, fixture name) of each module-, class- or package-scoped fixture the test uses."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return set()
    module = item.nodeid.split("::", 1)[0]
    return {(module, name) for name in info.names_closure
            if (defs := info.name2fixturedefs.get(name)) and defs[-1].scope in ("module", "class", "package")}


def group_of(item: pytest.Item, serial_fixtures: frozenset[tuple[str, str]] = frozenset()) -> str | None:
    """The xdist group of a test by the rules above (None: a unit of its own). A test that shares a module-scoped
    fixture with a serial test runs in the serial group too, so that the fixture is built once."""
    explicit = item.get_closest_marker("xdist_group")
    fixtures = _module_fixtures(item)
    if item.get_closest_marker(SERIAL) is not None or fixtures & serial_fixtures:
        if explicit is not None:
            raise pytest.UsageError(f"{item.nodeid}: a serial test runs in the serial group, not in an xdist_group")
        return SERIAL
    if explicit is not None:
        return str(explicit.args[0] if explicit.args else explicit.kwargs.get("name", "default"))
    return item.nodeid.split("::", 1)[0] if fixtures else None


def group_tests(items: list[pytest.Item]) -> dict[str, str]:
    """Order the collection (slow units first, larger groups before smaller, then the rest, the serial group last)
    and return each grouped test's group by node id."""
    serial = frozenset().union(*(_module_fixtures(i) for i in items if i.get_closest_marker(SERIAL) is not None))
    units = {item.nodeid: group_of(item, serial) or item.nodeid for item in items}
    sizes: dict[str, int] = {}
    slow: dict[str, bool] = {}
    for item in items:
        unit = units[item.nodeid]
        sizes[unit] = sizes.get(unit, 0) + 1
        slow[unit] = slow.get(unit, False) or item.get_closest_marker("slow") is not None

    def order(indexed: tuple[int, pytest.Item]) -> tuple[bool, bool, int, int]:
        index, item = indexed
        unit = units[item.nodeid]
        return unit == SERIAL, not slow[unit], -sizes[unit] if slow[unit] else 0, index

    items[:] = [item for _, item in sorted(enumerate(items), key=order)]
    return {nodeid: unit for nodeid, unit in units.items() if unit != nodeid}


def groups_file(basetemp: Path) -> Path:
    """Where the workers leave the groups for the controller: its base temporary directory (the parent of theirs).
    xdist's own way, a suffix on each node id, does not take on pytest 9, whose node ids are not attributes."""
    return basetemp / "xdist-groups.json"


class SerialLast(LoadGroupScheduling):
    """xdist's loadgroup with the group "serial" held back: once it is all that is left, every worker but one is
    shut down (each first runs what it holds), and when they have gone the last one runs the serial group alone."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:  # read once every worker has collected (and so written the file)
            path = groups_file(self.config._tmp_path_factory.getbasetemp())  # type: ignore[attr-defined]
            self._groups = json.loads(path.read_text()) if path.exists() else {}
        return self._groups.get(nodeid, nodeid)

    def _only_serial_left(self) -> bool:
        return list(self.workqueue) == [SERIAL]

    def _reschedule(self, node: Any) -> None:
        if node.shutting_down:
            return
        if self._only_serial_left():
            if [n for n in self.nodes if not n.shutting_down] != [node]:
                node.shutdown()
            elif len(self.nodes) == 1:
                self._assign_work_unit(node)
            return  # else the others are finishing: remove_node hands the serial group over
        super()._reschedule(node)

    def _assign_work_unit(self, node: Any) -> None:
        if SERIAL in self.workqueue and not self._only_serial_left():
            serial = self.workqueue.pop(SERIAL)
            super()._assign_work_unit(node)
            self.workqueue[SERIAL] = serial  # back at the end
        elif not self._only_serial_left() or len(self.nodes) == 1:
            super()._assign_work_unit(node)
        # else: only serial tests and several workers (the first hand-out): _reschedule keeps one of them

    def remove_node(self, node: Any) -> str | None:
        crashed = super().remove_node(node)
        if self._only_serial_left() and len(self.nodes) == 1 and not self.nodes[0].shutting_down:
            self._assign_work_unit(self.nodes[0])
        return crashed


class Plan:
    """The plugin conftest.py registers where xdist is installed."""

    @pytest.hookimpl(trylast=True)  # after -m and -k have deselected
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        groups = group_tests(items)
        if hasattr(config, "workerinput") and config.option.basetemp:
            target = groups_file(Path(config.option.basetemp).parent)
            partial = target.with_name(f"{target.name}.{os.getpid()}")
            partial.write_text(json.dumps(groups))
            partial.replace(target)  # every worker writes the same: whole files only

    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> LoadGroupScheduling | None:
        return SerialLast(config, log) if config.getvalue("dist") == "loadgroup" else None

    def pytest_xdist_auto_num_workers(self, config: pytest.Config) -> int:
        """One worker per CPU this process may use (2 on the reference VM), at most 8: each worker starts its own
        PostgreSQL server and browser."""
        return max(1, min(len(os.sched_getaffinity(0)), 8))
