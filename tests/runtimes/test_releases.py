"""Listing the points of a bisect: releases on an index (from recorded index pages, and the real PyPI and Maven
Central where marked), wheels in a directory or a listing, commits of a local git repository."""

from __future__ import annotations

import json
import subprocess

import pytest
from packaging.tags import Tag
from packaging.version import Version

from colbench.runtimes.builds import git_builds, wheel_builds
from colbench.runtimes.releases import (
    ReleaseError,
    maven_releases,
    pypi_releases,
    release_range,
    releases_from_files,
)
from tests.app.probe import build_wheel

HERE = frozenset({Tag("cp311", "cp311", "manylinux_2_17_x86_64"), Tag("py3", "none", "any")})


def files(*names: str, yanked: tuple[str, ...] = ()) -> list[dict[str, object]]:
    return [{"filename": n, "yanked": n in yanked} for n in names]


def test_versions_in_version_order_with_why_some_cannot_be_tested():
    listed = releases_from_files("PyArrow", files(
        "pyarrow-10.0.0-cp311-cp311-manylinux_2_17_x86_64.whl",
        "pyarrow-9.0.0-cp311-cp311-manylinux_2_17_x86_64.whl",   # the index's order is not the version order
        "pyarrow-9.0.1.tar.gz",                                  # a source build only: hours for pyarrow
        "pyarrow-11.0.0-cp38-cp38-manylinux_2_17_x86_64.whl",    # no wheel for this interpreter
        "pyarrow-12.0.0-cp311-cp311-manylinux_2_17_x86_64.whl",
        "pyarrow-13.0.0rc1-cp311-cp311-manylinux_2_17_x86_64.whl",
        "other-1.0.0-py3-none-any.whl", "junk.txt",
        yanked=("pyarrow-12.0.0-cp311-cp311-manylinux_2_17_x86_64.whl",)), tags=HERE)
    assert [(r.version, r.skip) for r in listed] == [
        ("9.0.0", ""), ("9.0.1", "no wheel for this interpreter (a source build only)"), ("10.0.0", ""),
        ("11.0.0", "no wheel for this interpreter"), ("12.0.0", "yanked"), ("13.0.0rc1", "")]


def test_a_package_of_source_distributions_only_builds_them():
    listed = releases_from_files("tiny", files("tiny-0.1.tar.gz", "tiny-0.2.zip"), tags=HERE)
    assert [(r.version, r.skip) for r in listed] == [("0.1", ""), ("0.2", "")]


def test_html_index_pages_are_read_too():
    page = ('<html><body><a href="x/pyarrow-1.0.0-py3-none-any.whl#sha256=1">pyarrow-1.0.0-py3-none-any.whl</a>'
            '<a href="y" data-yanked="">pyarrow-2.0.0-py3-none-any.whl</a></body></html>')
    listed = pypi_releases("pyarrow", fetch=lambda url, accept: ("text/html", page), index="https://mirror/simple")
    assert [(r.version, r.skip) for r in listed] == [("1.0.0", ""), ("2.0.0", "yanked")]


def test_json_index_pages_and_a_missing_package():
    body = json.dumps({"files": files("polars-1.0.0-py3-none-any.whl", "polars-1.1.0-py3-none-any.whl")})
    listed = pypi_releases("polars", fetch=lambda url, accept: ("application/vnd.pypi.simple.v1+json", body))
    assert [r.version for r in listed] == ["1.0.0", "1.1.0"]

    def missing(url: str, accept: str) -> tuple[str, str]:
        raise FileNotFoundError(url)

    with pytest.raises(ReleaseError, match="no such package on https://pypi.org/simple"):
        pypi_releases("polars", fetch=missing)
    with pytest.raises(ReleaseError, match="not a Python distribution name"):
        pypi_releases("../etc", fetch=missing)


RELEASES = releases_from_files("p", files(*(f"p-{v}-py3-none-any.whl" for v in
                                            ("1.0.0", "1.1.0", "1.2.0rc1", "1.2.0", "2.0.0", "2.1.0.dev3"))),
                               tags=HERE)


def test_range_keeps_both_ends_and_leaves_pre_releases_out_unless_asked():
    assert [r.version for r in release_range(RELEASES, "1.0.0", "2.0.0")] == ["1.0.0", "1.1.0", "1.2.0", "2.0.0"]
    assert [r.version for r in release_range(RELEASES, "1.0", "2.0", pre=True)] == \
        ["1.0.0", "1.1.0", "1.2.0rc1", "1.2.0", "2.0.0"]
    assert [r.version for r in release_range(RELEASES, "1.1.0", "2.1.0.dev3")][-1] == "2.1.0.dev3"  # named: kept


@pytest.mark.parametrize(("good", "bad", "message"), [
    ("1.1.0", "1.1.0", "same version"),
    ("2.0.0", "1.0.0", "--good 2.0.0 is newer than --bad 1.0.0"),
    ("1.0.0", "1.9.0", r"--bad 1.9.0: p has no such release \(near it: 1.2.0rc1, 1.2.0, 2.0.0, 2.1.0.dev3\)"),
    ("one", "2.0.0", "not a version"),
])
def test_range_errors_are_one_line(good, bad, message):
    with pytest.raises(ReleaseError, match=message) as info:
        release_range(RELEASES, good, bad, what="p")
    assert "\n" not in str(info.value)


def test_maven_metadata():
    xml = ("<metadata><versioning><versions><version>17.0.0</version><version>18.1.0</version>"
           "<version>18.0.0</version><version>not-a-version</version></versions></versioning></metadata>")
    listed = maven_releases(fetch=lambda url, accept: ("application/xml", xml), minimum="18.0.0", why_minimum="old")
    assert [(r.version, r.skip) for r in listed] == [("17.0.0", "older than 18.0.0 (old)"), ("18.0.0", ""),
                                                       ("18.1.0", "")]


def test_wheels_in_a_directory_in_version_order_and_in_a_listing_in_its_order(tmp_path):
    for version in ("1.10.0", "1.9.0", "1.2.0"):
        build_wheel(tmp_path / "w", version)
    (tmp_path / "w" / "other-1.0-py3-none-any.whl").write_bytes(b"")
    built = wheel_builds(tmp_path / "w", "bisectprobe")
    assert [b.label for b in built] == ["1.2.0", "1.9.0", "1.10.0"]
    assert all(b.requirement.endswith(".whl") and b.skip == "" for b in built)
    with pytest.raises(ReleaseError, match="name one with --package"):
        wheel_builds(tmp_path / "w")
    listing = tmp_path / "nightly.txt"
    listing.write_text("# oldest first\nw/bisectprobe-1.10.0-py3-none-any.whl\nw/bisectprobe-1.2.0-py3-none-any.whl\n")
    assert [b.label for b in wheel_builds(listing)] == ["1.10.0", "1.2.0"]
    listing.write_text("w/nothing.whl\nw/bisectprobe-1.2.0-py3-none-any.whl\n")
    with pytest.raises(ReleaseError, match="line 1: w/nothing.whl is not a wheel file"):
        wheel_builds(listing)
    with pytest.raises(ReleaseError, match="no such directory or file"):
        wheel_builds(tmp_path / "missing")


def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_git_range_lists_first_parent_commits_oldest_first(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    shas = []
    for i in range(4):
        (repo / "f.txt").write_text(str(i))
        _git(repo, "add", "f.txt")
        _git(repo, "commit", "-qm", f"c{i}")
        shas.append(_git(repo, "rev-parse", "HEAD"))
    built = git_builds(str(repo), shas[0][:8], "main", "bisectprobe")
    assert [b.label for b in built] == [s[:12] for s in shas]
    assert built[1].requirement == f"bisectprobe @ git+file://{repo}@{shas[1]}"
    with pytest.raises(ReleaseError, match="not an ancestor"):
        git_builds(str(repo), shas[2], shas[1], "bisectprobe")
    with pytest.raises(ReleaseError, match="--good nope: no such commit"):
        git_builds(str(repo), "nope", shas[1], "bisectprobe")
    with pytest.raises(ReleaseError, match="same commit"):
        git_builds(str(repo), shas[1], shas[1][:10], "bisectprobe")


@pytest.mark.slow
def test_the_real_index_and_maven_central():
    """Network: PyPI's pyarrow releases from 14.0.2 to 26.0.1, and Arrow Java's on Maven Central."""
    chosen = release_range(pypi_releases("pyarrow"), "14.0.2", "26.0.1", what="pyarrow")
    versions = [r.version for r in chosen]
    assert versions[0] == "14.0.2" and versions[-1] == "26.0.1" and "18.1.0" in versions
    assert versions == sorted(versions, key=Version)
    java = [r.version for r in maven_releases(minimum="18.0.0")]
    assert "18.1.0" in java and java.index("18.1.0") < java.index("19.0.0")
    with pytest.raises(ReleaseError, match="no such package"):
        pypi_releases("colbench-no-such-package-3f9c2")
