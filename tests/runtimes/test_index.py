"""The package index client `colbench watch` asks: a real pypiserver on 127.0.0.1 (PEP 503 HTML) serving wheels
built here, a PEP 691 JSON index served by http.server (yanked files and pre-releases), uv's index settings, and an
index that is down or too slow (bounded, one line)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from colbench.runtimes.releases import ReleaseError, fetch_url, index_urls, listed_releases, newer_releases
from tests.app.watch_probe import build_wheel
from tests.index_server import IndexServer, free_port

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


@pytest.fixture(scope="module")
def pypi(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexServer]:
    folder = tmp_path_factory.mktemp("wheels")
    for version in ("1.0.0", "1.1.0", "1.2.0rc1"):
        build_wheel(folder, version)
    server = IndexServer(folder).start()
    yield server
    server.stop()


class JsonIndex:
    """A PEP 691 index of one package, `otherpkg`, whose 2.1.0 is yanked; `delay` seconds before each answer."""

    def __init__(self, delay: float = 0.0) -> None:
        files = [{"filename": f"otherpkg-{v}-py3-none-any.whl", "url": f"../{v}.whl", "hashes": {},
                  "yanked": v == "2.1.0"} for v in ("2.0.0", "2.1.0", "2.2.0", "3.0.0a1")]
        page = json.dumps({"meta": {"api-version": "1.0"}, "name": "otherpkg", "files": files}).encode()
        self.asked: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                owner.asked.append(self.headers.get("Accept", ""))
                time.sleep(delay)
                if self.path.rstrip("/").endswith("/otherpkg"):
                    self.send_response(200)
                    self.send_header("Content-Type", JSON_TYPE)
                    self.end_headers()
                    self.wfile.write(page)
                else:
                    self.send_response(404)
                    self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def json_index() -> Iterator[JsonIndex]:
    index = JsonIndex()
    yield index
    index.close()


@pytest.fixture
def no_uv_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL",
                 "UV_CONFIG_FILE", "UV_NO_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user uv.toml
    monkeypatch.setenv("XDG_CONFIG_DIRS", str(tmp_path / "system"))


def test_pypiserver_html_pages_list_the_versions_and_a_new_wheel_at_once(pypi: IndexServer) -> None:
    base, releases = listed_releases("watchprobe", pypi.url)
    assert base == pypi.url
    assert [r.version for r in releases] == ["1.0.0", "1.1.0", "1.2.0rc1"]
    assert [r.version for r in newer_releases(releases, "1.0.0")] == ["1.1.0"]  # a pre-release only with --pre
    assert [r.version for r in newer_releases(releases, "1.0.0", pre=True)] == ["1.1.0", "1.2.0rc1"]
    build_wheel(pypi.folder, "1.3.0")
    try:
        _, again = listed_releases("watchprobe", pypi.url)
        assert [r.version for r in newer_releases(again, "1.1.0")] == ["1.3.0"]
    finally:
        (pypi.folder / "watchprobe-1.3.0-py3-none-any.whl").unlink()


def test_json_pages_are_asked_for_first_and_yanked_releases_are_never_watched(json_index: JsonIndex) -> None:
    _, releases = listed_releases("otherpkg", json_index.url)
    assert json_index.asked[0].startswith(JSON_TYPE)
    assert [(r.version, r.skip) for r in releases] == [("2.0.0", ""), ("2.1.0", "yanked"), ("2.2.0", ""),
                                                       ("3.0.0a1", "")]
    assert [r.version for r in newer_releases(releases, "2.0.0", pre=True)] == ["2.2.0", "3.0.0a1"]


def test_a_package_no_index_has_is_one_line(pypi: IndexServer) -> None:
    with pytest.raises(ReleaseError, match=r"^--package nosuchpkg: no such package on http://127\.0\.0\.1:\d+/simple"):
        listed_releases("nosuchpkg", pypi.url)
    with pytest.raises(ReleaseError, match="not a Python distribution name"):
        listed_releases("../etc", pypi.url)


def test_uv_settings_decide_the_index_first_index_wins(no_uv_settings: None, pypi: IndexServer,
                                                       json_index: JsonIndex, monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    assert index_urls() == ["https://pypi.org/simple"]
    monkeypatch.setenv("UV_INDEX", f"local={pypi.url}")
    monkeypatch.setenv("UV_DEFAULT_INDEX", json_index.url)
    assert index_urls() == [pypi.url, json_index.url]
    assert listed_releases("watchprobe")[0] == pypi.url  # the first index that has it
    assert listed_releases("otherpkg")[0] == json_index.url  # not on the first: the next one
    assert index_urls("http://given/simple/") == ["http://given/simple"]  # --index alone
    monkeypatch.delenv("UV_INDEX")
    monkeypatch.delenv("UV_DEFAULT_INDEX")
    config = tmp_path / "uv.toml"
    config.write_text(f'[[index]]\nname = "mine"\nurl = "{pypi.url}"\n\n[[index]]\nurl = "{json_index.url}"\n'
                      "default = true\n")
    monkeypatch.setenv("UV_CONFIG_FILE", str(config))
    assert index_urls() == [pypi.url, json_index.url]
    monkeypatch.setenv("UV_NO_CONFIG", "1")
    assert index_urls() == ["https://pypi.org/simple"]


def test_an_index_that_is_down_or_too_slow_is_one_line_within_its_deadline() -> None:
    port = free_port()  # nothing listens there
    with pytest.raises(ReleaseError, match=rf"^cannot reach 127\.0\.0\.1:{port}: connection refused"):
        listed_releases("x", f"http://127.0.0.1:{port}/simple")
    slow = JsonIndex(delay=3.0)
    try:
        started = time.monotonic()
        with pytest.raises(ReleaseError, match="in 0.5 s, the deadline of a network call"):
            fetch_url(slow.url + "/otherpkg/", JSON_TYPE, deadline_s=0.5)
        assert time.monotonic() - started < 2.5
        started = time.monotonic()  # a watch's --net-deadline reaches the listing
        with pytest.raises(ReleaseError, match="in 0.5 s, the deadline of a network call"):
            listed_releases("otherpkg", slow.url, deadline_s=0.5)
        assert time.monotonic() - started < 2.5
    finally:
        slow.close()


def test_credentials_in_an_index_url_never_reach_a_message() -> None:
    port = free_port()
    with pytest.raises(ReleaseError) as caught:
        listed_releases("x", f"http://user:s3cret@127.0.0.1:{port}/simple")
    assert "s3cret" not in str(caught.value)
