import pytest

from colbench.cli.common import UsageError, parse_duration


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90), ("90", 90), ("10m", 600), ("1h", 3600), ("1h30m", 5400), ("2m30s", 150), ("1.5m", 90),
    (" 10M ", 600),
])
def test_budgets_parse_to_seconds(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "ten minutes", "10x", "-5m", "0s", "m", "1h 1h"])
def test_bad_budgets_say_how_to_write_one(text):
    with pytest.raises(UsageError, match="--budget"):
        parse_duration(text)
