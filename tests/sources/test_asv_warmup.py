"""asv's warm-up before sampling (asv_runner's `benchmark_timing`): the declared `warmup_time`, else asv's default of
0.1 s on CPython, untimed calls (with setup hooks, each after the setup's re-run) before the first timed one. Without
it, a sub-millisecond call of pyarrow's asv suite took 1.35-1.65x asv's figure (docs/asv.md)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import colbench

SUITE = '''
from pathlib import Path

LOG = Path(__file__).with_name("calls.log")


class Warm:
    def setup(self):
        with LOG.open("a") as log:
            log.write("setup\\n")

    def time_default(self):
        with LOG.open("a") as log:
            log.write("default\\n")


class Cold:
    warmup_time = 0

    def setup(self):
        pass

    def time_declared(self):
        with LOG.open("a") as log:
            log.write("declared\\n")
'''


def test_a_time_benchmark_warms_up_as_asv_does_before_its_first_timed_call(tmp_path: Path):
    suite = tmp_path / "benchmarks"
    suite.mkdir()
    (suite / "__init__.py").write_text("")
    (suite / "bench_warm.py").write_text(SUITE)
    done = colbench("run", f"asv:{suite}", "--processes", "1", "--iterations", "2", "--warmup", "0",
                    home=tmp_path / "home")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = (suite / "calls.log").read_text().split()
    # a tenth of a second of calls of a few microseconds, each after the setup (asv's redo_setup re-runs it from the
    # second call on), then the 2 timed ones; a declared warmup_time of 0: the 2 timed calls only
    assert lines.count("default") > 20, lines.count("default")
    assert lines.count("setup") == lines.count("default")
    assert lines.count("declared") == 2
