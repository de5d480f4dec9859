"""How a count reads: '1 case', '2 cases', never '1 cases' or 'case(s)'."""

from __future__ import annotations


def plural(count: int, word: str, many: str | None = None) -> str:
    """The count and the word in the form it takes: 1 case, 0 cases, 1,200 points; `many` for a plural that is not
    the word + s or es ('1 run record', '2 run records' need none; '1 criterion', '2 criteria' do)."""
    return f"{count:,} {word if count == 1 else many or plural_of(word)}"


def waits(count: int) -> str:
    """'1 record waits', '2 records wait': the count, its noun and the verb that agrees with it."""
    return f"{plural(count, 'record')} {'waits' if count == 1 else 'wait'}"


def plural_of(word: str) -> str:
    """The plural of a regular English noun (of its last word): process → processes, entry → entries."""
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u"):
        return word[:-1] + "ies"
    return word + "s"


#: where a ratio stops reading as a number: a paired t at 2 blocks (1 degree of freedom, alpha 0.0016) spans
#: 10^-8 to 10^8 on a noisy wall time, and printing those digits claims a precision the interval does not have
RATIO_SHOWN = (0.001, 1000.0)


def ratio_text(value: float) -> str:
    """A ratio (or an interval's end) to three decimals, or '<0.001' / '>1000' beyond RATIO_SHOWN ('-' if unknown)."""
    if value != value:  # NaN
        return "-"
    if value < RATIO_SHOWN[0]:
        return f"<{RATIO_SHOWN[0]:g}"
    if value > RATIO_SHOWN[1]:
        return f">{RATIO_SHOWN[1]:g}"
    return f"{value:.3f}"


def percent_text(fraction: float) -> str:
    """A fraction as a percentage to one decimal, or '>1000%' beyond what a ratio is shown to ('-' if unknown)."""
    if fraction != fraction or fraction == float("inf"):
        return "-"
    if fraction * 100 > RATIO_SHOWN[1]:
        return f">{RATIO_SHOWN[1]:g}%"
    return f"{fraction * 100:.1f}%"
