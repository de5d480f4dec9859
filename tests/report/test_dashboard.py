"""`colbench serve` over HTTP: loopback by default, read-only, request values checked (404 / 400), headers."""

from __future__ import annotations

import urllib.request
from urllib.parse import quote, urlencode

import psutil
import pytest

from tests.report.conftest import http_get
from tests.report.helpers import load_run

# a real `colbench serve` over a store of real runs (the session's placebo_home): the full suite, not the fast tier
pytestmark = pytest.mark.slow


def test_binds_to_loopback_by_default(dashboard):
    _, proc = dashboard
    listening = [c.laddr for c in psutil.Process(proc.pid).net_connections(kind="inet") if c.status == "LISTEN"]
    assert listening and all(address.ip == "127.0.0.1" for address in listening), listening


def test_pages_answer_with_a_strict_policy(dashboard, placebo_home):
    base, _ = dashboard
    _, run, _ = load_run(placebo_home, "p2")
    for path in ("/", f"/runs/{run.run_id}", "/compare", "/history?benchmark=placebo"):
        status, headers, body = http_get(base + path)
        assert status == 200, (path, body[:300])
        assert headers.get("Content-Security-Policy", "").startswith("default-src 'none'")
        assert headers.get("X-Content-Type-Options") == "nosniff"
        assert headers.get("Content-Type", "").startswith("text/html")
        assert "https://" not in body and "http://" not in body and "<script" not in body


def test_unknown_things_are_404_and_malformed_ones_400(dashboard, placebo_home):
    base, _ = dashboard
    _, run, _ = load_run(placebo_home, "p2")
    not_found = [
        "/runs/no-such-run",
        "/runs/" + run.run_id[:8],  # a prefix resolves on the command line, never in a URL
        "/runs/" + quote("' OR 1=1 --", safe=""),
        "/compare?" + urlencode({"baseline": "nope", "contender": run.run_id}),
        "/compare?" + urlencode({"baseline": run.run_id, "baseline_env": "nope", "contender": run.run_id}),
        "/history?" + urlencode({"benchmark": "placebo", "machine": "nope"}),
        "/history?" + urlencode({"benchmark": "no-such-benchmark"}),
        "/history?" + urlencode({"benchmark": "placebo", "case": "0123456789abcdef"}),
        "/no/such/page",
    ]
    for path in not_found:
        status, _, body = http_get(base + path)
        assert status == 404, (path, status, body[:300])
        assert "colbench dashboard" in body  # the page, not a bare error
    malformed = [
        "/history?" + urlencode({"benchmark": "placebo'; DROP TABLE results; --"}),
        "/history?" + urlencode({"benchmark": "placebo", "case": "../../etc/passwd"}),
        "/compare?" + urlencode({"baseline": run.run_id, "contender": run.run_id}),  # nothing to compare
    ]
    for path in malformed:
        status, _, body = http_get(base + path)
        assert status == 400, (path, status, body[:300])
    status, _, _ = http_get(base + "/")
    assert status == 200, "the store is untouched and still answers"


def test_read_only(dashboard):
    base, _ = dashboard
    request = urllib.request.Request(base + "/", data=b"x=1", method="POST")
    try:
        urllib.request.urlopen(request, timeout=30)
        raise AssertionError("POST was accepted")
    except urllib.error.HTTPError as error:
        assert error.code == 405
