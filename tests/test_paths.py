"""The guards every path passes: names (`check_name`), `inside`, `owned`, `owned_dir` and `remove`."""

from __future__ import annotations

from pathlib import Path

import pytest

from colbench.paths import UnsafePath, check_name, inside, owned, owned_dir, remove


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


def test_remove_deletes_inside_only_and_never_through_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             ) -> None:
    base, decoy = tmp_path / "base", tmp_path / "decoy"
    monkeypatch.setenv("COLBENCH_HOME", str(base))
    monkeypatch.delenv("COLBENCH_DATA", raising=False)
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
    with pytest.raises(UnsafePath, match="outside colbench's own directories"):
        remove(decoy / "keep", within=decoy)  # entry inside `within`, but `within` is not colbench's


def test_owned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLBENCH_DATA", str(tmp_path / "data"))
    assert owned(tmp_path / "data" / "x", "d") == tmp_path / "data" / "x"
    assert owned(tmp_path / "home", "d") == tmp_path / "home"
    for elsewhere in (tmp_path, tmp_path / "home" / ".." / "elsewhere", Path("/")):
        with pytest.raises(UnsafePath, match="outside"):
            owned(elsewhere, "d")


def test_a_symlink_on_the_way_out_of_the_home_is_refused_and_named(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    home, decoy = tmp_path / "home", tmp_path / "decoy"
    (decoy / "sub").mkdir(parents=True)
    (decoy / "sub" / "keep").write_text("keep")
    home.mkdir()
    (home / "envs").symlink_to(decoy)
    monkeypatch.setenv("COLBENCH_HOME", str(home))
    monkeypatch.delenv("COLBENCH_DATA", raising=False)
    with pytest.raises(UnsafePath, match=r"envs is a symlink to .*decoy"):
        owned(home / "envs" / "sub", "environments directory")
    with pytest.raises(UnsafePath, match="outside"):  # the root itself, though the entry is "inside" it
        remove(home / "envs" / "sub", within=home / "envs")
    with pytest.raises(UnsafePath):
        owned_dir(home / "envs" / "new", "environments directory")
    assert (decoy / "sub" / "keep").read_text() == "keep" and not (decoy / "new").exists()
    # a link that stays inside the home is fine
    (home / "real").mkdir()
    (home / "alias").symlink_to(home / "real")
    assert owned_dir(home / "alias" / "x") == home / "alias" / "x" and (home / "real" / "x").is_dir()


def test_the_default_data_directory_linked_out_of_the_home_is_not_owned(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """COLBENCH_DATA unset: data lives in the home, and a link there to elsewhere is refused; set COLBENCH_DATA to
    that directory to make it colbench's."""
    home, elsewhere = tmp_path / "home", tmp_path / "disk"
    home.mkdir()
    elsewhere.mkdir()
    (home / "data").symlink_to(elsewhere)
    monkeypatch.setenv("COLBENCH_HOME", str(home))
    monkeypatch.delenv("COLBENCH_DATA", raising=False)
    with pytest.raises(UnsafePath, match="COLBENCH_DATA"):
        owned(home / "data" / "cache")
    monkeypatch.setenv("COLBENCH_DATA", str(elsewhere))
    assert owned(home / "data" / "cache") == home / "data" / "cache"
