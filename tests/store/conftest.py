"""A PostgreSQL server for the whole test session, and a fresh database per test that asks for one."""

from __future__ import annotations

import itertools
import os

import pytest

from tests.store.conbench_server import ConbenchServer, IndexUnreachable, install
from tests.store.pgserver import PgServer, find_bindir

_names = itertools.count()


def _missing(reason: str) -> None:
    if os.environ.get("COLBENCH_REQUIRE_ALL") == "1":
        pytest.fail(f"{reason} (COLBENCH_REQUIRE_ALL=1: .ci/postgres.sh installs it)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def pg_server():
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed: `uv sync --all-extras`")
    bindir = find_bindir()
    if bindir is None:
        _missing("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install postgresql")
    server = PgServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.destroy()


@pytest.fixture
def pg_url(pg_server: PgServer) -> str:
    """A new, empty database on the session's server."""
    pg_server.wait_ready()
    return pg_server.create_database(f"t{os.getpid()}_{next(_names)}")


@pytest.fixture(scope="session")
def conbench_server(pg_server: PgServer):
    """A real Conbench server (the newest release on PyPI, installed once into a cached environment) on the
    session's PostgreSQL, with one user: `.email`, `.password`, `.url`."""
    try:
        venv = install()
    except IndexUnreachable as exc:
        _missing(f"{exc} (pip/uv need the package index)")
    server = ConbenchServer(pg_server, venv)
    try:
        server.start()
        yield server
    finally:
        server.stop()
