"""Parameters and parameter grids: what a benchmark can vary, and how the CLI's text becomes values."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

# Union, not `|`: the worker evaluates this alias on every Python from 3.8 (docs/environments.md)
ParamValue = Union[str, int, float, bool, None]


def _clip(text: str, limit: int = 80) -> str:
    """`colbench.redact.clip`, imported on the error paths only (a worker never pays for redact's patterns)."""
    from colbench.redact import clip as clip_text

    return clip_text(text, limit)


class ParamError(ValueError):
    """A parameter name or value the benchmark cannot accept."""


def _parse_bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in {"true", "1", "yes", "on"}:
        return True
    if lowered in {"false", "0", "no", "off"}:
        return False
    raise ValueError(f"not a boolean: {text!r}")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


_PARSERS: dict[type, Callable[[str], Any]] = {str: str, int: int, float: _parse_float, bool: _parse_bool}


@dataclass(frozen=True)
class Param:
    """One axis of a benchmark's grid.

    `default` lists the values a plain run covers; `choices` (when given) is every value the benchmark accepts;
    `check` validates open-ended values (a positive duration, a row count …) and returns a reason when it refuses.
    """

    name: str
    default: tuple[ParamValue, ...]
    type: type = str
    choices: tuple[ParamValue, ...] | None = None
    help: str = ""
    check: Callable[[Any], str | None] | None = None

    def __post_init__(self) -> None:
        if not self.default:
            raise ValueError(f"param {self.name!r} needs at least one default value")
        for value in self.default:
            self.validate(value)

    def parse(self, text: str) -> ParamValue:
        """Turn CLI text into a typed value, then validate it."""
        text = text.strip()
        if text.lower() in {"none", "null"} and None in (self.choices or self.default):
            return self.validate(None)
        try:
            value = _PARSERS[self.type](text)
        except (ValueError, KeyError) as exc:
            what = "finite number" if self.type is float else self.type.__name__
            raise ParamError(
                f"param {self.name!r}: {_clip(text)!r} is not a valid {what}"
                + (f"; choose from {self.describe_choices()}{self._did_you_mean(text)}" if self.choices else "")
            ) from exc
        return self.validate(value)

    def validate(self, value: Any) -> ParamValue:
        if self.choices is not None and value not in self.choices:
            raise ParamError(f"param {self.name!r}: {_clip(repr(value))} is not accepted; choose from "
                             f"{self.describe_choices()}{self._did_you_mean(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ParamError(f"param {self.name!r}: {value!r} is not a finite number")
        if self.check is not None and value is not None:
            reason = self.check(value)
            if reason:
                raise ParamError(f"param {self.name!r}: {_clip(repr(value))} {reason}")
        if value is None or isinstance(value, (str, int, float, bool)):
            return value
        raise ParamError(f"param {self.name!r}: {_clip(repr(value))} is not a string, number or boolean")

    def describe_choices(self) -> str:
        return ", ".join(str(c) for c in self.choices or ())

    def _did_you_mean(self, value: Any) -> str:
        return did_you_mean(value, self.choices or ())


def did_you_mean(value: Any, choices: Iterable[Any]) -> str:
    """' (did you mean 'polars'?)' for a near miss among `choices` (case and spelling), else ''."""
    text = str(value).strip().lower()
    known = {str(c).lower(): str(c) for c in choices}
    import difflib  # only on a misspelt name: a worker never pays for it

    close = difflib.get_close_matches(text, list(known), n=1, cutoff=0.6) if len(text) <= 100 else []
    return f" (did you mean {known[close[0]]!r}?)" if close else ""


def positive(value: float) -> str | None:
    return None if value > 0 else "must be > 0"


def non_negative(value: float) -> str | None:
    return None if value >= 0 else "must be >= 0"


@dataclass(frozen=True)
class Grid:
    """An ordered set of params; expands to every combination of chosen values."""

    params: tuple[Param, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        if len(names) != len(set(names)):
            raise ValueError(f"duplicate param names in grid: {names}")

    def __getitem__(self, name: str) -> Param:
        for param in self.params:
            if param.name == name:
                return param
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.params]

    def choose(self, overrides: Mapping[str, Sequence[Any]] | None = None) -> dict[str, list[ParamValue]]:
        """Values per param: the defaults, with `overrides` (already typed or still text) replacing some axes."""
        overrides = dict(overrides or {})
        unknown = sorted(set(overrides) - set(self.names))
        if unknown:
            raise ParamError(
                f"unknown param {', '.join(_clip(repr(u)) for u in unknown)}; this benchmark takes: "
                f"{', '.join(self.names)}{did_you_mean(unknown[0], self.names)}"
            )
        chosen: dict[str, list[ParamValue]] = {}
        for param in self.params:
            if param.name in overrides:
                values = [param.parse(v) if isinstance(v, str) else param.validate(v) for v in overrides[param.name]]
                chosen[param.name] = list(dict.fromkeys(values))
            else:
                chosen[param.name] = list(param.default)
        return chosen

    def expand(self, chosen: Mapping[str, Iterable[ParamValue]]) -> list[dict[str, ParamValue]]:
        names = list(chosen)
        return [dict(zip(names, combo)) for combo in itertools.product(*(chosen[n] for n in names))]


def parse_param_option(option: str) -> tuple[str, list[str]]:
    """`NAME=V1,V2` → (NAME, [V1, V2])."""
    name, sep, values = option.partition("=")
    if not sep or not name.strip() or not values.strip():
        raise ParamError(f"--param {_clip(option)!r}: write it as NAME=VALUE[,VALUE...], e.g. --param threads=1,2")
    return name.strip(), split_values(f"--param {_clip(option)!r}", values)


def split_values(what: str, text: str) -> list[str]:
    """`V1,V2` → [V1, V2]; an empty item (`a,,b`, a trailing comma, nothing at all) is an error, not dropped."""
    values = [v.strip() for v in text.split(",")]
    if not all(values):
        raise ParamError(f"{what}: empty value in {_clip(text)!r}; write VALUE[,VALUE...] without empty items")
    return values
