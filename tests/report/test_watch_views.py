"""The watched releases where people look: the dashboard's /watch page (served for real, in a thread) and the
Markdown report's section, from a store holding a watch's records."""

from __future__ import annotations

import urllib.request

from colbench.report.markdown import render_markdown
from colbench.report.watch_view import timelines
from colbench.store import open_store
from colbench.store.base import WatchQuery
from tests.report.conftest import serve_in_thread
from tests.store.test_watch_store import release


def _store(tmp_path):
    url = str(tmp_path / "results.duckdb")
    store = open_store(url)
    for record in (release("1.3.0", "error"), release("1.2.0", "regression"), release("1.1.0")):
        store.record_watch(record)
    return url, store


def test_a_watch_is_a_timeline_in_version_order_with_its_verdicts_and_flame_graph(tmp_path):
    _, store = _store(tmp_path)
    (timeline,) = timelines(store)
    assert [(r.version, r.verdict) for r in timeline.rows] == [("1.1.0", "no change"), ("1.2.0", "regression"),
                                                               ("1.3.0", "error")]
    regressed = timeline.rows[1]
    assert regressed.ratio == "1.0600× [1.0500, 1.0700]" and regressed.flamegraph == "/x/flamegraph.svg"
    assert regressed.compare_link.startswith("/compare?baseline=r1.2.0&contender=r1.2.0&baseline_env=1.0.0")
    text = render_markdown([], [], timelines(store))
    assert "## Watch: watchprobe on vm (watchprobe-crc)" in text and "| 1.2.0 |" in text and "**regression**" in text
    assert timelines(store, ["another"]) == [] and len(store.watched(WatchQuery(watch_id="w1"))) == 3


def test_the_dashboard_shows_every_watch_with_links_to_its_runs_and_compare_pages(tmp_path):
    url, _ = _store(tmp_path)
    with serve_in_thread(url) as base, urllib.request.urlopen(base + "/watch", timeout=30) as page:
        body = page.read().decode()
    assert "Watched releases" in body and "watchprobe on vm" in body
    assert 'href="/runs/r1.2.0"' in body and "verdicts and flame graph" in body
    assert body.index(">1.1.0<") < body.index(">1.2.0<") < body.index(">1.3.0<")
