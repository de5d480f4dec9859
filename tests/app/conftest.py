"""The tests' PostgreSQL server (tests/store/conftest.py) for the use cases that share a store across processes."""

from tests.store.conftest import pg_server, pg_url  # noqa: F401 - fixtures, found by name

__all__ = ["pg_server", "pg_url"]
