"""Alerts of a watch: Markdown and a webhook body from the records, POSTed to a real receiver (http.server in a
thread); a receiver that is down or answers 500 leaves the alert in the store, and the next pass sends it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from colbench.app.errors import UsageError
from colbench.app.notify import deliver, new_alert, webhook_url
from colbench.app.watch_measure import run_argv
from colbench.store import open_store
from colbench.store.base import Store
from tests.index_server import Receiver, free_port
from tests.store.test_watch_store import release


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver()
    yield found
    found.close()


@pytest.fixture
def store(tmp_path) -> Store:
    return open_store(str(tmp_path / "results.duckdb"))


def test_an_alert_is_the_pass_in_markdown_and_a_slack_compatible_body(store: Store, receiver: Receiver) -> None:
    releases = [release("1.1.0"), release("1.2.0", "regression")]
    alert = new_alert(releases, ["w1"], "## colbench watch\n")
    assert alert is not None
    assert alert.payload["text"].startswith("colbench watch: 1 regression")
    assert "adler32_z" in alert.payload["text"] and "1.0600× [1.0500, 1.0700]" in alert.payload["text"]
    assert [r["version"] for r in alert.payload["colbench"]["releases"]] == ["1.1.0", "1.2.0"]
    delivery = deliver(store, receiver.url, ["w1"], alert)
    assert delivery.sent == [alert.alert_id] and delivery.kept == {}
    assert receiver.posts == [alert.payload]
    assert "secret-token" not in delivery.destination  # a webhook's path is its secret
    assert deliver(store, receiver.url, ["w1"], None).sent == []  # sent once, never again


def test_nothing_worth_telling_makes_no_alert() -> None:
    assert new_alert([release("1.1.0"), release("1.2.0")], ["w1"], "md") is None


def test_a_receiver_that_fails_keeps_the_alert_for_the_next_pass(store: Store, receiver: Receiver) -> None:
    alert = new_alert([release("1.2.0", "error")], ["w1"], "md")
    receiver.status = 500
    kept = deliver(store, receiver.url, ["w1"], alert)
    assert kept.sent == [] and "answered HTTP 500" in kept.kept[alert.alert_id]
    down = f"http://127.0.0.1:{free_port()}/hook"
    assert "cannot reach" in deliver(store, down, ["w1"], None).kept[alert.alert_id]
    (waiting,) = store.watch_alerts(("w1",))
    assert waiting.attempts == 2 and waiting.sent_at is None
    receiver.status = 200
    second = new_alert([release("1.3.0", "regression")], ["w1"], "md")
    sent = deliver(store, receiver.url, ["w1"], second)
    assert sent.sent == [alert.alert_id, second.alert_id]  # the kept one first
    assert [p["colbench"]["releases"][0]["version"] for p in receiver.posts] == ["1.2.0", "1.3.0"]
    assert store.watch_alerts(("w1",)) == []


def test_a_webhook_must_be_http_and_its_path_never_reaches_a_run_record(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="http:// or https://"):
        webhook_url("file:///etc/passwd")
    monkeypatch.setenv("COLBENCH_WATCH_WEBHOOK", "https://hooks.example.com/services/T0/B0/XYZ")
    assert webhook_url(None) == "https://hooks.example.com/services/T0/B0/XYZ"
    argv = run_argv(["colbench", "watch", "s", "--notify", "https://hooks.example.com/services/T0/B0/XYZ",
                     "--notify=https://h.example.com/x/SECRET"])
    assert "XYZ" not in " ".join(argv) and "SECRET" not in " ".join(argv)
    assert argv[4] == "https://hooks.example.com/…"


def test_a_silent_webhook_holds_the_pass_no_longer_than_its_net_deadline(store: Store, monkeypatch) -> None:
    """The webhook obeys `--net-deadline` and $COLBENCH_NET_DEADLINE_S like every other network call of a pass."""
    import time

    from tests.netfaults import FaultServer

    server = FaultServer()
    try:
        alert = new_alert([release("1.2.0", "regression")], ["w1"], "md")
        started = time.monotonic()
        kept = deliver(store, f"{server.url}/silent/hook", ["w1"], alert, deadline_s=0.6)
        assert time.monotonic() - started < 2.5
        assert kept.sent == [] and "within the deadline (0.6 s)" in kept.kept[alert.alert_id]
        monkeypatch.setenv("COLBENCH_NET_DEADLINE_S", "0.5")
        started = time.monotonic()
        again = deliver(store, f"{server.url}/slow-body/hook", ["w1"], None)
        assert time.monotonic() - started < 2.5 and "(0.5 s)" in again.kept[alert.alert_id]
        assert store.watch_alerts(("w1",))[0].attempts == 2  # kept for the next pass
    finally:
        server.close()
