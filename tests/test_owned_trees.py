"""Every tree colbench writes in, with a symlink planted at each level of it (issue 32).

For each writer (the spool and its per-store folder, the data cache with its manifests and locks, downloads, the
user source registry, environments, profiles, explain output, reports, the Java worker's jars, the Valgrind helper,
git clones, the store file in the home), a link that leads out of the owned root is planted at one level of the path
the writer uses, pointing at a decoy directory (or a decoy file) outside. The writer is called as colbench calls it
(direct calls, no CLI: cheap), and must refuse with one UnsafePath line before writing: the decoy tree hashes the
same before and after, and no file of the home or the decoy moved."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from colbench.paths import UnsafePath, owned, owned_dir, remove, write_text
from colbench.store.spool import store_key

STORE = SimpleNamespace(url="/somewhere/results.duckdb")  # what profiles_root needs of a store: its key
KEY = store_key(STORE.url)
RUN, ENV, CASE = "20260101T000000-abcdef", "default", "placebo-0123456789"
SIDES = f"{RUN}.a--{RUN}.b"


def _spool(home: Path) -> None:
    from colbench.store.spool import Spool
    from tests.store.helpers import synthetic_result

    Spool("k" * 16, "postgresql://u@h/db").put_result(synthetic_result(RUN, 1))


def _spool_drain(home: Path) -> None:
    """What waits in a spool is claimed (renamed) and uploaded: refused before the first rename."""
    from colbench.store.spool import Spool

    Spool("k" * 16, None).drain(lambda runs: None, lambda results: len(results))


def _cache(home: Path) -> None:
    from colbench.data.cache import materialize
    from colbench.model.benchmark import DataRequest

    materialize(DataRequest("int64_frame", "csv", rows=10))


def _register(home: Path) -> None:
    from colbench.data.sources import register_source

    source = home.parent / "source.csv"
    source.write_text("a,b\n1,2\n")
    register_source("mine", str(source))


def _download(home: Path) -> None:
    """A user source on a local disk is linked (or copied) into the downloads, as `data get` does."""
    from colbench.data.download import fetch_source
    from colbench.data.sources import get_source
    from colbench.paths import data_dir

    source = get_source("mine")
    assert source is not None
    fetch_source(source, data_dir(), progress=False)


def _profile(home: Path) -> None:
    from colbench.profiles.stored import case_folder
    from colbench.runner.profile import PROFILE_NAME, _compress

    folder = owned_dir(case_folder(STORE, RUN, ENV, CASE), "profile directory")  # as profile_case makes it
    dump = home.parent / "callgrind.out"
    dump.write_text("events: Ir\n")
    _compress(dump, folder / PROFILE_NAME)


def _explain(home: Path) -> None:
    from colbench.app.explain import write_outputs
    from colbench.profiles.stored import explain_folder

    write_outputs(explain_folder(STORE, f"{RUN}.a", f"{RUN}.b") / CASE, "<svg/>", {"case_id": CASE})  # type: ignore


def _java(home: Path) -> None:
    from colbench.runtimes.java import build_jar

    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip("java and mvn are needed to get as far as the build's folders")
    build_jar("18.1.0")


def _valgrind(home: Path) -> None:
    from colbench.runner.instructions import build_helper

    build_helper("valgrind-3.19.0", home)


def _git(home: Path) -> None:
    from colbench.runtimes.builds import _clone

    _clone("https://example.invalid/repo.git")  # refused before git runs: nothing is fetched


def _store(home: Path) -> None:
    from colbench.store import open_store

    open_store(str(home / "results.duckdb"), create=True).close()


def _env_lock(home: Path) -> None:
    """What ensure_environment writes into an environment's folder (after uv made it): its lock and marker."""
    from colbench.paths import envs_dir

    folder = owned_dir(envs_dir() / "0123456789abcdef", "environment")
    write_text(folder / "requirements.lock", "six==1.16.0\n", "lock file")
    write_text(folder / "colbench-env.json", "{}", "environment marker")


@dataclass(frozen=True)
class Tree:
    name: str
    levels: tuple[str, ...]  # below the home; a trailing "*" marks a file (linked to a decoy file)
    write: Callable[[Path], None]
    prepare: Callable[[Path], None] | None = None  # what must be there first (a registered source)


TREES = [
    Tree("spool", ("spool", f"spool/{'k' * 16}", f"spool/{'k' * 16}/results", f"spool/{'k' * 16}/store.txt*"),
         _spool),
    Tree("spool-drain", (f"spool/{'k' * 16}", f"spool/{'k' * 16}/results"), _spool_drain),
    Tree("cache", ("data", "data/cache", "data/cache/int64_frame", "data/cache/int64_frame/r10-s0",
                   "data/cache/int64_frame/r10-s0/csv.csv*", "data/cache/int64_frame/r10-s0/csv.csv.lock*",
                   "data/cache/int64_frame/r10-s0/csv.csv.manifest.json*"), _cache),
    Tree("downloads", ("data", "data/downloads", "data/downloads/mine", "data/downloads/mine/source.csv*",
                       "data/downloads/mine/source.csv.manifest.json*"), _download, _register),
    Tree("registry", ("sources.json*",), _register),
    Tree("envs", ("envs", "envs/0123456789abcdef", "envs/0123456789abcdef/requirements.lock*"), _env_lock),
    Tree("profiles", ("profiles", f"profiles/{KEY}", f"profiles/{KEY}/runs", f"profiles/{KEY}/runs/{RUN}",
                      f"profiles/{KEY}/runs/{RUN}/{ENV}", f"profiles/{KEY}/runs/{RUN}/{ENV}/{CASE}",
                      f"profiles/{KEY}/runs/{RUN}/{ENV}/{CASE}/profile.callgrind.gz*"), _profile),
    Tree("explain", (f"profiles/{KEY}/explain", f"profiles/{KEY}/explain/{SIDES}",
                     f"profiles/{KEY}/explain/{SIDES}/{CASE}", f"profiles/{KEY}/explain/{SIDES}/{CASE}/explain.json*",
                     f"profiles/{KEY}/explain/{SIDES}/{CASE}/flamegraph.svg*"), _explain),
    Tree("java", ("workers", "workers/java", "workers/java/18.1.0"), _java),
    Tree("valgrind", ("valgrind",), _valgrind),
    Tree("git", ("git",), _git),
    Tree("store", ("results.duckdb*",), _store),
]
CASES = [(tree, level) for tree in TREES for level in tree.levels]


def tree_hash(root: Path) -> str:
    """Names, kinds and contents of everything under `root` (links not followed)."""
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files) + dirs:
            path = Path(folder) / name
            digest.update(str(path.relative_to(root)).encode() + b"\0")
            if path.is_file() and not path.is_symlink():
                digest.update(path.read_bytes())
    return digest.hexdigest()


def files_under(root: Path) -> set[Path]:
    return {Path(folder, name) for folder, _, names in os.walk(root) for name in names}


@pytest.mark.parametrize(("tree", "level"), CASES, ids=[f"{t.name}:{lvl}" for t, lvl in CASES])
def test_a_link_at_any_level_is_refused_before_anything_is_written(tmp_path, monkeypatch, tree, level):
    home, decoy = tmp_path / "home", tmp_path / "decoy"
    monkeypatch.setenv("COLBENCH_HOME", str(home))
    monkeypatch.delenv("COLBENCH_DATA", raising=False)
    monkeypatch.delenv("COLBENCH_STORE", raising=False)
    (decoy / "results").mkdir(parents=True)
    (decoy / "sentinel.txt").write_text("decoy: must survive\n")
    (decoy / "results" / "keep.txt").write_text("not a spooled result: must not move\n")
    if tree.prepare is not None:
        tree.prepare(home)
    is_file = level.endswith("*")
    planted = home / level.rstrip("*")
    planted.parent.mkdir(parents=True, exist_ok=True)
    planted.symlink_to(decoy / "sentinel.txt" if is_file else decoy)
    before_hash, before_home = tree_hash(decoy), files_under(home)

    with pytest.raises(UnsafePath) as refused:
        tree.write(home)

    message = str(refused.value)
    assert "\n" not in message and "is a symlink to" in message, message
    assert tree_hash(decoy) == before_hash, f"the decoy changed: {sorted(files_under(decoy))}"
    assert files_under(home) == before_home, "a file appeared in (or left) the home"
    assert planted.is_symlink()


@pytest.mark.parametrize("tree", [t for t in TREES if t.name not in ("java", "spool-drain")], ids=lambda t: t.name)
def test_without_a_link_the_same_writers_write(tmp_path, monkeypatch, tree):
    """The probe above can fail: the same calls, with no link planted, write where they should."""
    home = tmp_path / "home"
    monkeypatch.setenv("COLBENCH_HOME", str(home))
    monkeypatch.delenv("COLBENCH_DATA", raising=False)
    if tree.name == "git":
        with pytest.raises(Exception) as failed:  # noqa: B017 - no network here: git fails, after the checks
            tree.write(home)
        assert not isinstance(failed.value, UnsafePath)
        return
    if tree.name == "valgrind" and shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    if tree.prepare is not None:
        tree.prepare(home)
    tree.write(home)
    first = home / tree.levels[-1].rstrip("*")
    assert first.exists() or any(home.rglob("*")), f"{tree.name} wrote nothing"


def test_a_link_inside_the_home_that_stays_inside_is_followed(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("COLBENCH_HOME", str(home))
    (home / "disk" / "spool").mkdir(parents=True)
    (home / "spool").symlink_to(home / "disk" / "spool")
    _spool(home)
    assert any((home / "disk" / "spool").rglob("*.json"))


def test_move_and_remove_refuse_a_link_on_either_side(tmp_path, monkeypatch):
    from colbench.paths import move

    home, decoy = tmp_path / "home", tmp_path / "decoy"
    monkeypatch.setenv("COLBENCH_HOME", str(home))
    (home / "a").mkdir(parents=True)
    decoy.mkdir()
    (decoy / "keep").write_text("keep")
    (home / "a" / "f").write_text("f")
    (home / "out").symlink_to(decoy)
    with pytest.raises(UnsafePath, match="out is a symlink"):
        move(home / "a" / "f", home / "out" / "f")
    with pytest.raises(UnsafePath, match="out is a symlink"):
        move(home / "out" / "keep", home / "a" / "keep")
    with pytest.raises(UnsafePath):
        remove(home / "out" / "keep", within=home)
    assert (home / "a" / "f").exists() and (decoy / "keep").read_text() == "keep"
    assert sorted(p.name for p in decoy.iterdir()) == ["keep"]


def test_an_explicit_root_outside_the_home_is_checked_from_itself(tmp_path, monkeypatch):
    """`data --root DIR`, a report's output directory: the walk starts there, and a link below it is refused."""
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    root, decoy = tmp_path / "mine", tmp_path / "decoy"
    (root / "sub").mkdir(parents=True)
    decoy.mkdir()
    (root / "link").symlink_to(decoy)
    assert owned(root / "sub" / "f", "file", root) == root / "sub" / "f"
    with pytest.raises(UnsafePath, match="link is a symlink"):
        write_text(root / "link" / "f", "x", "file", root)
    with pytest.raises(UnsafePath, match="outside"):
        write_text(root / "f", "x")  # without the root, a place outside the home is not colbench's
    assert not any(decoy.iterdir())


def test_a_link_swapped_in_after_the_check_cannot_redirect_a_write_or_a_rename(tmp_path, monkeypatch):
    """Issue 48's known limit: between the owned-path walk and the write, a folder swapped for a link to elsewhere
    took the write there. colbench now writes, renames and deletes relative to a handle on the folder it checked
    (`directory_handle`): the swap changes the path, not the folder written."""
    from colbench.paths import atomic_path, move

    home = tmp_path / "home"
    monkeypatch.setenv("COLBENCH_HOME", str(home))
    folder, outside = home / "out", tmp_path / "outside"
    folder.mkdir(parents=True)
    outside.mkdir()
    with atomic_path(folder / "result.json") as tmp:
        folder.rename(home / "moved")  # the swap, after the check and before the first byte
        folder.symlink_to(outside, target_is_directory=True)
        tmp.write_bytes(b"data")
    assert list(outside.iterdir()) == []
    assert (home / "moved" / "result.json").read_bytes() == b"data"

    (home / "src").mkdir()
    (home / "src" / "a").write_bytes(b"a")
    folder.unlink()
    folder.mkdir()
    real = folder
    import colbench.paths as paths

    checked = paths.owned

    def owned_then_swapped(path, what="directory", root=None):  # the swap lands right after each check
        result = checked(path, what, root)
        if Path(path) == real / "a" and not (home / "moved2").exists():
            real.rename(home / "moved2")
            real.symlink_to(outside, target_is_directory=True)
        return result

    monkeypatch.setattr(paths, "owned", owned_then_swapped)
    with pytest.raises((UnsafePath, FileNotFoundError)):
        move(home / "src" / "a", real / "a")
    assert list(outside.iterdir()) == []
