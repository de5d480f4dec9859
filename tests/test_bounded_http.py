"""Every network call has one total deadline and says in one line what the server did (issue 32).

A misbehaving server on 127.0.0.1 (tests/netfaults.py) answers slowly, endlessly, hugely, with 500/401/403, with a
307 to another port, with HTML instead of JSON, with a reset or with something that is not HTTP. The calls colbench
makes (bounded_http itself, Conbench's login and reads, the package index, a download) end within their deadline
(short ones here) with one line, and a download keeps what it had."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from colbench.bounded_http import DEADLINE_ENV, NetError, check_deadline, deadline_from_env, request, status_problem
from tests.netfaults import FaultServer, closed_port, fault_server

DEADLINE = 1.0
SLACK = 1.5  # what a deadline may be overrun by here (a busy 2-core machine): the watchdog, a thread switch


@pytest.fixture(scope="module")
def server():
    with fault_server() as started:
        yield started


#: behaviour → (the kind of NetError, a phrase of its one line)
FAILURES = {
    "slow-body": ("timeout", "sent"),
    "slow-headers": ("timeout", "sent no complete answer"),
    "silent": ("timeout", "in 1 s, the deadline of a network call"),
    "huge": ("too-large", "announced 100,000,000,000 bytes"),
    "endless": ("too-large", "sent more than 1,048,576 bytes"),
    "redirect": ("redirect", "another server: colbench does not follow that"),
    "html": ("content-type", "answered text/html where json was expected"),
    "reset": ("reset", "cut the connection off after 5 bytes of 1,000 bytes"),
    "garbage": ("not-http", "did not answer HTTP"),
}


@pytest.mark.parametrize("behaviour", sorted(FAILURES))
def test_a_misbehaving_server_ends_in_one_line_within_the_deadline(server: FaultServer, behaviour: str) -> None:
    kind, phrase = FAILURES[behaviour]
    started = time.monotonic()
    with pytest.raises(NetError) as failed:
        request(f"{server.url}/{behaviour}/api", deadline_s=DEADLINE, max_bytes=1 << 20, content_types=("json",))
    took = time.monotonic() - started
    assert failed.value.kind == kind and phrase in str(failed.value), str(failed.value)
    assert "\n" not in str(failed.value)
    assert took < DEADLINE + SLACK, f"{behaviour}: {took:.1f} s for a {DEADLINE} s deadline"


def test_the_redirect_went_nowhere(server: FaultServer) -> None:
    before = len(server.requests)
    with pytest.raises(NetError, match="redirected"):
        request(f"{server.url}/redirect/x", deadline_s=DEADLINE)
    assert len(server.requests) == before + 1  # asked once; the other port was never asked


@pytest.mark.parametrize(("status", "kind", "phrase"), [
    (500, "server-error", "failed with a server error (HTTP 500: \"the server broke\")"),
    (401, "refused", "refused the request (HTTP 401: \"who are you\")"),
    (403, "refused", "refused the request (HTTP 403"),
])
def test_error_statuses_are_answers_worded_apart(server: FaultServer, status: int, kind: str, phrase: str) -> None:
    answer = request(f"{server.url}/error{status}/x", deadline_s=DEADLINE, content_types=("json",))
    assert answer.status == status and not answer.ok
    problem = status_problem(answer, "the server")
    assert problem.kind == kind and phrase in str(problem), str(problem)


def test_unreachable_is_its_own_message() -> None:
    with pytest.raises(NetError) as failed:
        request(f"http://127.0.0.1:{closed_port()}/x", deadline_s=DEADLINE)
    assert failed.value.kind == "unreachable" and "connection refused" in str(failed.value)


def test_a_good_answer_is_read(server: FaultServer) -> None:
    answer = request(f"{server.url}/json/x", deadline_s=DEADLINE, content_types=("json",))
    assert answer.ok and answer.content_type == "application/json" and b'"ok": true' in answer.body


def test_only_http_urls_are_fetched() -> None:
    for url in ("file:///etc/passwd", "ftp://127.0.0.1/x", "ext::sh -c true"):
        with pytest.raises(NetError, match="http:// and https:// URLs only"):
            request(url, deadline_s=DEADLINE)


def test_the_deadline_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEADLINE_ENV, raising=False)
    assert deadline_from_env() == 60.0
    monkeypatch.setenv(DEADLINE_ENV, "2.5")
    assert deadline_from_env() == 2.5
    for bad in ("0", "-1", "nan", "inf", "soon"):
        monkeypatch.setenv(DEADLINE_ENV, bad)
        with pytest.raises(NetError, match="a number above 0"):
            deadline_from_env()
    assert check_deadline("7") == 7.0


# ------------------------------------------------------------------------------------- the calls colbench makes


@pytest.mark.parametrize(("behaviour", "phrase"), [
    ("error500", "failed with a server error at the login of me@example.org (HTTP 500"),
    ("error401", "refused the login of me@example.org (HTTP 401"),
    ("error403", "refused the login of me@example.org (HTTP 403"),
    ("slow-body", "the deadline of a network call"),
    ("slow-headers", "the deadline of a network call"),
    ("redirect", "another server"),
    ("garbage", "did not answer HTTP"),
])
def test_conbench_login_says_what_the_server_did(server: FaultServer, behaviour: str, phrase: str) -> None:
    from colbench.store.conbench import ConbenchSession
    from colbench.store.conbench.client import ConbenchError

    session = ConbenchSession(f"{server.url}/{behaviour}", email="me@example.org", password="S3cretPassw0rd",
                              timeout_s=DEADLINE)
    started = time.monotonic()
    with pytest.raises(ConbenchError) as failed:
        session.login()
    message = str(failed.value)
    assert phrase in message and "\n" not in message and "S3cret" not in message, message
    assert time.monotonic() - started < DEADLINE + SLACK
    if behaviour == "error500":
        assert "CONBENCH_PASSWORD" not in message  # a server error is not a wrong login


def test_conbench_unreachable(server: FaultServer) -> None:
    from colbench.store.conbench import ConbenchSession
    from colbench.store.conbench.client import ConbenchError

    session = ConbenchSession(f"http://127.0.0.1:{closed_port()}", email="me@example.org", password="pw",
                              timeout_s=DEADLINE)
    with pytest.raises(ConbenchError, match="cannot reach Conbench at http://127.0.0.1:"):
        session.login()


def test_conbench_html_instead_of_json(server: FaultServer) -> None:
    from colbench.store.conbench import ConbenchSession
    from colbench.store.conbench.client import ConbenchError

    session = ConbenchSession(f"{server.url}/html", email="me@example.org", password="pw", timeout_s=DEADLINE)
    with pytest.raises(ConbenchError, match="answered text/html where json was expected"):
        session.login()  # a captive portal's 200 is no login
    with pytest.raises(ConbenchError, match="answered text/html where json was expected"):
        session.batches("run")


@pytest.mark.parametrize(("behaviour", "phrase"), [
    ("slow-body", "the deadline of a network call"),
    ("error500", "failed with a server error (HTTP 500"),
    ("error403", "refused the request (HTTP 403"),
    ("redirect", "another server"),
    ("garbage", "did not answer HTTP"),
    ("reset", "cut the connection off"),
])
def test_the_package_index_says_what_it_did(server: FaultServer, behaviour: str, phrase: str) -> None:
    from colbench.runtimes.releases import ReleaseError, fetch_url, pypi_releases

    started = time.monotonic()
    with pytest.raises(ReleaseError) as failed:
        pypi_releases("pyarrow", fetch=lambda url, accept: fetch_url(url, accept, deadline_s=DEADLINE),
                      index=f"{server.url}/{behaviour}/simple")
    assert phrase in str(failed.value) and "\n" not in str(failed.value), str(failed.value)
    assert time.monotonic() - started < DEADLINE + SLACK


@pytest.mark.parametrize(("behaviour", "phrase"), [
    ("slow-body", "interrupted at"),
    ("huge", "announced 100,000,000,000 bytes"),
    ("redirect", "another server"),
    ("error500", "server error (HTTP 500"),
])
def test_a_download_ends_in_one_line_and_keeps_what_it_had(server: FaultServer, tmp_path: Path, behaviour: str,
                                                            phrase: str) -> None:
    from colbench.data.download import download
    from colbench.data.errors import DataError

    dest = tmp_path / "f.csv"
    started = time.monotonic()
    with pytest.raises(DataError) as failed:
        download(f"{server.url}/{behaviour}/f.csv", dest, progress=False, retries=0, timeout=DEADLINE,
                 expected_size=100_000)
    assert phrase in str(failed.value) and "\n" not in str(failed.value), str(failed.value)
    assert not dest.exists()
    # the deadline of a download grows with the size it announces (100 kB here: a fraction of a second)
    assert time.monotonic() - started < DEADLINE + 1 + SLACK
    if behaviour == "slow-body":
        assert (tmp_path / "f.csv.part").stat().st_size > 0  # what arrived is kept for the next try


def test_a_login_in_the_url_is_sent_as_basic_auth_and_named_nowhere(tmp_path: Path) -> None:
    """Issue 48: `--index`/`--notify` with `user:pass@` failed as "the name does not resolve": urllib took
    `user:pass@127.0.0.1` for a host name. The login goes as an Authorization header; no message holds it."""
    from tests.app.watch_probe import build_wheel
    from tests.index_server import HostileIndex

    build_wheel(tmp_path, "1.0.0")
    index = HostileIndex(tmp_path, login=("probe", "Pw-s3cret-x")).start()
    try:
        answer = request(index.url + "/watchprobe/", deadline_s=10)
        assert answer.status == 200 and b"watchprobe-1.0.0" in answer.body
        refused = request(index.url.replace("Pw-s3cret-x", "wrong%40pass") + "/watchprobe/", deadline_s=10)
        assert refused.status == 401
        assert request(index.bare_url + "/watchprobe/", deadline_s=10).status == 401
        with pytest.raises(NetError) as caught:  # a failure names the URL without its login
            request(index.url + "/watchprobe/", deadline_s=10, content_types=("json",))
        assert "Pw-s3cret-x" not in str(caught.value)
    finally:
        index.stop()
