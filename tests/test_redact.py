"""The one redaction every argv, URL and record passes before it is stored, printed or exported."""

from __future__ import annotations

import pytest

from colbench.redact import redact, redact_doc


@pytest.mark.parametrize("text, expected", [
    ("postgresql://u:pw@h:5/db", "postgresql://u:***@h:5/db"),
    ("postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"),  # an unencoded @ in the password
    ("postgresql://colbench@127.0.0.1:5/db", "postgresql://colbench@127.0.0.1:5/db"),  # a user name is not secret
    ("https://ghp_abc123@github.com/o/r", "https://***@github.com/o/r"),  # a token as the user
    ("pkg @ git+https://x-access-token:TOK@github.com/o/r@v1", "pkg @ git+https://x-access-token:***@github.com/o/r@v1"),
    ("git+ssh://git@github.com/o/r", "git+ssh://git@github.com/o/r"),
    ("host=db password=pw dbname=x", "host=db password=*** dbname=x"),
    ("https://h/x?a=1&token=abc&b=2", "https://h/x?a=1&token=***&b=2"),
    ("@current CONBENCH_PASSWORD=zz MY_API_KEY=k PATH=/bin", "@current CONBENCH_PASSWORD=*** MY_API_KEY=*** PATH=/bin"),
    ('{"url": "postgresql://u:pw@h/d"}', '{"url": "postgresql://u:***@h/d"}'),  # JSON around it stays valid
    ("reader=pyarrow,polars", "reader=pyarrow,polars"),
])
def test_redact(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_redact_doc_masks_values_of_secret_named_keys() -> None:
    doc = {"variables": {"GITHUB_TOKEN": "abc", "N": "1"}, "argv": ["--store", "postgresql://u:pw@h/d"], "n": 3}
    assert redact_doc(doc) == {"variables": {"GITHUB_TOKEN": "***", "N": "1"},
                               "argv": ["--store", "postgresql://u:***@h/d"], "n": 3}
