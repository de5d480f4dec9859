"""Any way a worker ends becomes an error result: signals without a Python name included."""

from __future__ import annotations

import signal

import pytest

from colbench.runner.interrupt import signal_name
from colbench.store import open_store
from colbench.store.base import ResultQuery


def test_every_signal_number_gets_a_name():
    assert signal_name(signal.SIGTERM) == "SIGTERM"
    assert signal_name(signal.SIGRTMIN) == "SIGRTMIN"
    assert signal_name(40) == f"SIGRTMIN+{40 - signal.SIGRTMIN}"
    assert signal_name(signal.SIGRTMAX) == "SIGRTMAX"
    assert signal_name(200) == "signal 200"


@pytest.mark.slow
def test_a_worker_killed_by_a_real_time_signal_is_an_error_result_and_the_run_goes_on(cli, home):
    proc = cli("run", "placebo", "--param", "error=rt-signal,none", "--param", "duration=0", "--processes", "1",
               "--iterations", "1", "--warmup", "0")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    store = open_store(str(home / "results.duckdb"), create=False)
    (run,) = store.list_runs()
    assert run.status == "finished"
    results = {r.params["error"]: r for r in store.results(ResultQuery(run_ids=(run.run_id,)))}
    assert results["none"].status == "ok"
    killed = results["rt-signal"]
    name = f"SIGRTMIN+{40 - signal.SIGRTMIN}"
    assert killed.status == "error" and killed.process["exit_code"] == -40
    assert killed.error is not None and killed.error["kind"] == "crash" and killed.error["signal"] == name
    assert killed.error["message"] == f"worker killed by {name}"
