"""Secrets out of everything colbench records, prints or exports: passwords and tokens in URLs
(`postgresql://user:pw@host`, `https://TOKEN@github.com/…`, `x-access-token:TOKEN@…`), `password=`/`token=`
parameters in query strings and connection strings, and `KEY=VALUE` settings whose key names a secret.

One function, :func:`redact`, applied where argv, URLs and environment specs are written to a run record or a
result, where errors and URLs are printed, and again where stored records are shown or exported (records written
before redaction existed).

Two more rules for user text shown on a terminal or in a message: :func:`printable` escapes control characters
(a run or machine name in a shared store must not act on another user's terminal), and :func:`clip` cuts a long
value (a 10,000-character parameter is quoted by its first characters, never whole)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

MASK = "***"

# scheme://user:password@ or scheme://token@ (git+https:// and friends included); the parts stop at the characters
# that end a URL's authority, and at quotes and brackets so JSON, HTML and Markdown around a URL stay intact
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s/?#@:\"'<>\[\]]*)"
                       r"(?::(?P<password>[^\s/?#\"'<>\[\]]*))?@")
# a user with no password is a token for web hosts (https://TOKEN@github.com/…); for postgresql:// it is a user name
_TOKEN_AS_USER = ("http://", "https://", "git+http://", "git+https://")
_SECRET_KEY = r"[A-Za-z0-9_.-]*(?:password|passwd|token|secret|api[_-]?key)[A-Za-z0-9_.-]*"
# password=…, ?token=…, CONBENCH_PASSWORD=… (a query string, a libpq conninfo, an environment setting)
_SECRET_NAME = re.compile(rf"(?i){_SECRET_KEY}")
_KEY_VALUE = re.compile(rf"(?i)(?<![A-Za-z0-9_.-])(?P<key>{_SECRET_KEY}=)(?P<value>[^\s&#;,\"'<>]+)")


def _userinfo(match: re.Match[str]) -> str:
    scheme, user, password = match["scheme"], match["user"], match["password"]
    if password is not None:
        return f"{scheme}{user}:{MASK}@"
    if scheme.lower() in _TOKEN_AS_USER and user:
        return f"{scheme}{MASK}@"
    return match.group(0)


def redact(text: str) -> str:
    """`text` with every credential it holds replaced by ***."""
    if not isinstance(text, str) or not text:
        return text
    text = _USERINFO.sub(_userinfo, text)
    return _KEY_VALUE.sub(lambda m: m["key"] + MASK, text)


def redact_argv(argv: list[str]) -> list[str]:
    return [redact(str(a)) for a in argv]


def redact_doc(doc: Any) -> Any:
    """A copy of a JSON-like document (or a dataclass record) with every string value redacted (keys are kept)."""
    if isinstance(doc, str):
        return redact(doc)
    if isinstance(doc, dict):  # {"CONBENCH_PASSWORD": "…"}: the key says the value is a secret
        return {k: MASK if isinstance(v, str) and v and _SECRET_NAME.fullmatch(str(k)) else redact_doc(v)
                for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return type(doc)(redact_doc(v) for v in doc)
    if dataclasses.is_dataclass(doc) and not isinstance(doc, type):  # a record (model/records.py): field by field
        return dataclasses.replace(doc, **{f.name: redact_doc(getattr(doc, f.name))
                                           for f in dataclasses.fields(doc) if f.init})
    return doc


def is_redacted(text: str) -> bool:
    """Whether `text` lost a secret to redaction (a value colbench could not use again)."""
    return MASK in text


# C0 controls but tab, DEL and C1 controls (ESC starts terminal escape sequences; CSI, OSC … too)
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")


def printable(text: Any) -> Any:
    """`text` with every control character shown as an escape (\\x1b), so it cannot move a cursor, recolour or
    retitle a terminal; anything not a string is returned as it is."""
    if not isinstance(text, str):
        return text
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


#: what no document colbench writes may hold as text: C0 controls but tab, newline and carriage return, DEL, C1
#: controls, lone surrogates, U+FFFE/U+FFFF (XML forbids most of them; in HTML they are parse errors, and ESC, BEL or
#: NUL from a profiled symbol or a shared store's name must not reach a page raw)
_NOT_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def document_text(text: str) -> str:
    """`text` for an HTML page or an SVG/XML document: every character no document may hold replaced by U+FFFD
    (the replacement character, as a reader shows undecodable input)."""
    return _NOT_TEXT.sub("\ufffd", text)


def clip(text: str, limit: int = 80) -> str:
    """`text` cut to `limit` characters, saying how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"
