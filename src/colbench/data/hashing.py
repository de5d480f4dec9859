"""Checksums: parsing the ``md5:…`` / ``sha256:…`` notation and hashing files."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from colbench.data.errors import DataError

ALGORITHMS = ("md5", "sha1", "sha256", "sha512")


def parse_checksum(text: str) -> tuple[str, str]:
    """``"md5:22bd…"`` → ``("md5", "22bd…")``; a bare hex digest is md5 (32), sha1 (40) or sha256 (64)."""
    text = text.strip()
    if ":" in text:
        algo, _, digest = text.partition(":")
        algo = algo.lower()
    else:
        algo = {32: "md5", 40: "sha1", 64: "sha256", 128: "sha512"}.get(len(text), "")
        digest = text
    digest = digest.lower()
    if algo not in ALGORITHMS or not re.fullmatch(r"[0-9a-f]+", digest):
        raise DataError(f"bad checksum {text!r}: write it as md5:<hex> or sha256:<hex>")
    return algo, digest


def file_digest(path: Path, algo: str = "sha256") -> str:
    """Hex digest of a file (hashlib reads it in large blocks with the GIL released)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, algo).hexdigest()


def matches(path: Path, checksum: str) -> tuple[bool, str]:
    """Whether the file has the given checksum; also returns the actual value as ``algo:hex``."""
    algo, want = parse_checksum(checksum)
    got = file_digest(path, algo)
    return got == want, f"{algo}:{got}"
