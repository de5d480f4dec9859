"""The guards every path from user input passes: names (`check_name`), `inside`, `remove` and `require_owned`."""

from __future__ import annotations

from pathlib import Path

import pytest

from colbench.paths import UnsafePath, check_name, inside, remove, require_owned


@pytest.mark.parametrize("name", ["", ".", "..", "../x", "/abs", "a/b", "-flag", "a" * 65, "a\x00b", "a b"])
def test_check_name_refuses(name: str) -> None:
    with pytest.raises(UnsafePath):
        check_name(name, "name")


@pytest.mark.parametrize("part", ["..", ".", "../decoy", "a/../../decoy", "{decoy}", "link"])
def test_inside_refuses_what_resolves_outside(tmp_path: Path, part: str) -> None:
    base, decoy = tmp_path / "base", tmp_path / "decoy"
    base.mkdir()
    decoy.mkdir()
    (base / "link").symlink_to(decoy)
    with pytest.raises(UnsafePath):
        inside(base, part.format(decoy=decoy))
    assert inside(base, "a/../b") == base / "a/../b"  # lexically odd, but it stays inside


def test_remove_deletes_inside_only_and_never_through_a_link(tmp_path: Path) -> None:
    base, decoy = tmp_path / "base", tmp_path / "decoy"
    (base / "tree").mkdir(parents=True)
    (base / "tree" / "f").write_bytes(b"12345")
    decoy.mkdir()
    (decoy / "keep").write_text("keep")
    (base / "link").symlink_to(decoy)
    for outside in (decoy, decoy / "keep", base, base / "link" / "keep", base / ".." / "decoy"):
        with pytest.raises(UnsafePath):
            remove(outside, within=base)
    assert remove(base / "link", within=base) == 0 and not (base / "link").exists()
    assert remove(base / "tree", within=base) == 5 and not (base / "tree").exists()
    assert remove(base / "missing", within=base) == 0
    assert (decoy / "keep").read_text() == "keep"


def test_require_owned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLBENCH_DATA", str(tmp_path / "data"))
    assert require_owned(tmp_path / "data" / "x", "d") == tmp_path / "data" / "x"
    assert require_owned(tmp_path / "home", "d") == tmp_path / "home"
    for elsewhere in (tmp_path, tmp_path / "home" / ".." / "elsewhere", Path("/")):
        with pytest.raises(UnsafePath, match="outside"):
            require_owned(elsewhere, "d")
