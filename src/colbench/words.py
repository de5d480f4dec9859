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
