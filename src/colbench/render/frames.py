"""How a profile's function names read: C++ names without their argument lists and return types, nested
template arguments elided (`arrow::BaseBinaryBuilder<arrow::BinaryType>::Append`), everything else as it is.
Tables and flame graphs show these; JSON keeps the full names."""

from __future__ import annotations

_KEEP = {"(anonymous namespace)": "\x01", "operator()": "operator\x02", "operator<<": "operator\x03",
         "operator<": "operator\x04", "operator>>": "operator\x05", "operator>": "operator\x06",
         "operator->": "operator\x07"}
_RESTORE = {v: k for k, v in _KEEP.items()}


def short_function(name: str, template_depth: int = 1) -> str:
    """A C++ function name without its parameters, its return type, `[clone …]` suffixes and template arguments
    nested deeper than `template_depth` (shown as `…`). Names that are not C++ (C symbols, Python functions
    `py::f (file.py)`, `[no symbols] lib`) come back unchanged."""
    if "(" not in name and "<" not in name or name.startswith(("py::", "[")):
        return name
    text = name.split(" [clone", 1)[0]
    for old, new in _KEEP.items():
        text = text.replace(old, new)
    short = _elide_deep_templates(_drop_parameter_lists(text), template_depth).strip().removesuffix(" const")
    short = _drop_return_type(short)
    for new, old in _RESTORE.items():
        short = short.replace(new, old)
    return short if short and not short.startswith("<") else name


def _drop_parameter_lists(text: str) -> str:
    """Without what is in parentheses outside template arguments (not a function type inside them: `<void ()>`)."""
    out: list[str] = []
    angle = paren = 0
    for char in text:
        if not angle or paren:
            if char == "(":
                paren += 1
                continue
            if char == ")":
                paren = max(0, paren - 1)
                continue
            if paren:
                continue
        if char == "<":
            angle += 1
        elif char == ">":
            angle = max(0, angle - 1)
        out.append(char)
    return "".join(out)


def _elide_deep_templates(text: str, template_depth: int) -> str:
    """Template arguments nested deeper than `template_depth` shown as `<…>`."""
    out: list[str] = []
    angle = 0
    for char in text:
        if char == "<":
            angle += 1
            if angle == template_depth + 1:
                out.append("<…")
            if angle > template_depth:
                continue
        elif char == ">":
            angle = max(0, angle - 1)
            if angle >= template_depth:
                if angle == template_depth:
                    out.append(">")
                continue
        elif angle > template_depth:
            continue
        out.append(char)
    return "".join(out)


def _drop_return_type(short: str) -> str:
    """What follows the last space outside any template: a return type is separated from the name by one."""
    operator = short.find("operator ")  # `operator new`, `operator bool`: their spaces are part of the name
    if operator >= 0:
        short = short[:operator] + short[operator:].replace(" ", "\x08")
    depth, cut = 0, -1
    for index, char in enumerate(short):
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == " " and depth == 0:
            cut = index
    return (short[cut + 1:] if cut >= 0 else short).replace("\x08", " ")


def frame_label(name: str, library: str) -> str:
    """`arrow::BufferBuilder::Append (libarrow.so)`; a Python function's file already says where it is."""
    short = short_function(name)
    if library in ("", "?", "python") or short.startswith("[no symbols]"):
        return short
    return f"{short} ({library})"
