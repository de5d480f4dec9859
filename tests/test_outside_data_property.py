"""Property-based tests (hypothesis) of the parsers of outside data (issue 48): a package index's page (PEP 691
JSON of any shape, PEP 503 HTML of any text) and the profile readers (callgrind's dumps, `perf script`'s samples,
heaptrack's traces, of any bytes, compressed or not). Each returns what it promises or refuses in its own one-line
error: never another exception (an AttributeError, Python's int limit, a math domain error). Bounded
(`max_examples`) so the file runs in seconds, in the fast tier; COLBENCH_PROPERTY_EXAMPLES searches harder."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from packaging.version import Version

from colbench.profiles.callgrind import ProfileError, parse_callgrind
from colbench.profiles.heaptrack import DamagedProfile, read_heaptrack
from colbench.profiles.perf_script import read_samples
from colbench.runtimes.releases import Release, ReleaseError, pypi_releases

FAST = settings(max_examples=int(os.environ.get("COLBENCH_PROPERTY_EXAMPLES", "120")), deadline=None,
                database=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

NAME = "probe"
#: JSON of any shape, biased towards what an index entry holds
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=30))
FILENAMES = st.one_of(
    st.text(max_size=40),
    st.builds(lambda v, t: f"{NAME}-{v}-{t}", st.one_of(st.from_regex(r"[0-9]{1,6}(\.[0-9]{1,3}){0,3}", fullmatch=True),
                                                        st.just("9" * 5000), st.text(max_size=12)),
              st.sampled_from(["py3-none-any.whl", "cp312-cp312-manylinux_2_17_x86_64.whl", "tar.gz", "zip", ""])),
)
ENTRY = st.one_of(
    SCALAR,
    st.lists(SCALAR, max_size=3),
    st.fixed_dictionaries({"filename": st.one_of(FILENAMES, SCALAR)},
                          optional={"yanked": st.one_of(SCALAR, st.dictionaries(st.text(max_size=3), SCALAR)),
                                    "upload-time": st.one_of(SCALAR, st.lists(SCALAR, max_size=2)),
                                    "url": SCALAR}),
)
PAGE = st.one_of(
    st.fixed_dictionaries({"files": st.lists(ENTRY, max_size=12)}, optional={"meta": SCALAR, "name": SCALAR}),
    st.fixed_dictionaries({"files": SCALAR}),
    st.lists(ENTRY, max_size=3),
    SCALAR,
)


def one_line(message: str) -> None:
    assert message and "\n" not in message and "\r" not in message, repr(message)


def _check_releases(releases: list[Release]) -> None:
    versions = [Version(r.version) for r in releases]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)


@FAST
@given(PAGE)
def test_a_json_index_page_is_releases_or_one_line(page: object) -> None:
    body = json.dumps(page)

    def fetch(url: str, accept: str) -> tuple[str, str]:
        return "application/vnd.pypi.simple.v1+json", body

    notes: list[str] = []
    try:
        releases = pypi_releases(NAME, fetch, "http://127.0.0.1:1/simple", notes)
    except ReleaseError as exc:
        one_line(str(exc))
        # bad entries are skipped, never the whole listing failed for them (issue 48)
        assert not _good_wheels(page), (str(exc), page)
        return
    _check_releases(releases)
    assert {r.version for r in releases} >= _good_wheels(page)
    for note in notes:
        one_line(note)


def _good_wheels(page: object) -> set[str]:
    """The versions of the page's well-formed, unyanked pure-Python wheels of the package."""
    files = page.get("files") if isinstance(page, dict) else None
    good = set()
    for entry in files if isinstance(files, list) else []:
        if not (isinstance(entry, dict) and isinstance(entry.get("filename"), str)):
            continue
        if entry.get("yanked") not in (None, False) or not isinstance(entry.get("upload-time"), (str, type(None))):
            continue
        name = entry["filename"]
        parts = name.removesuffix("-py3-none-any.whl").split("-")
        if name.endswith("-py3-none-any.whl") and len(parts) == 2 and parts[0] == NAME and len(name) <= 255:
            try:
                good.add(str(Version(parts[1])))
            except ValueError:
                continue
    return good


@FAST
@given(st.one_of(st.text(max_size=300),
                 st.lists(st.tuples(FILENAMES, st.booleans()), max_size=8).map(
                     lambda links: "".join(f'<a href="/f"{" data-yanked" if y else ""}>{n}</a>' for n, y in links))))
def test_an_html_index_page_is_releases_or_one_line(body: str) -> None:
    def fetch(url: str, accept: str) -> tuple[str, str]:
        return "text/html", body

    try:
        releases = pypi_releases(NAME, fetch, "http://127.0.0.1:1/simple")
    except ReleaseError as exc:
        one_line(str(exc))
        return
    _check_releases(releases)


#: lines shaped like each profile format's, and any bytes
CALLGRIND_LINES = st.lists(st.one_of(
    st.sampled_from(["# callgrind format", "version: 1", "events: Ir", "fl=(1) a.c", "fn=(1) main", "fn=(2)",
                     "cfn=(2) f", "calls=1 0", "0 100", "+1 5", "-1 3", "* 7", "summary: 10", "totals: 10",
                     "ob=(1) libz.so", "cob=(1)", "positions: line", "fi=(2) b.h", "fe=(1)"]),
    st.text(max_size=20)), max_size=30).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))
PERF_LINES = st.lists(st.one_of(
    st.sampled_from(["python 123 cpu-clock: 1000 ", "python 123 cpu-clock:ppp: 250000 ",
                     "\t7f00 main+0x10 (/usr/bin/python3)", "\tffff [unknown] ([unknown])", "",
                     "\t7f01 py::f:/x.py+0x1 (/tmp/perf-1.map)"]),
    st.text(max_size=20)), max_size=30).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))
HEAPTRACK_LINES = st.lists(st.one_of(
    st.sampled_from(["v 10100 3", "X /usr/bin/python3", "s 4 main", "t 1 0", "i 1000 1 1", "a 64 1", "+ 0",
                     "- 0", "c 10", "A", "R 100", "I 1 2"]),
    st.text(max_size=20)), max_size=30).map(lambda lines: "\n".join(lines).encode("utf-8", "surrogatepass"))


def _written(tmp_path: Path, name: str, data: bytes, packed: bool, cut: bool) -> Path:
    body = gzip.compress(data) if packed else data
    if cut:
        body = body[: max(1, len(body) // 2)]
    path = tmp_path / (name + (".gz" if packed else ""))
    path.write_bytes(body)
    return path


@FAST
@given(st.one_of(CALLGRIND_LINES, st.binary(max_size=200)), st.booleans(), st.booleans())
def test_a_callgrind_file_is_a_profile_or_one_line(tmp_path: Path, data: bytes, packed: bool, cut: bool) -> None:
    path = _written(tmp_path, "profile.callgrind", data, packed, cut)
    try:
        parse_callgrind(path)
    except ProfileError as exc:
        one_line(str(exc))


@FAST
@given(st.one_of(PERF_LINES, st.binary(max_size=200)), st.booleans(), st.booleans())
@example("¹".encode(), False, False)  # found by a fresh clone's run: str.isdigit() takes it, float() does not
@example("main 12 cycles:\n\t1 f (/x)\n\nmain 13 ² cycles:\n\t1 g (/x)\n".encode(), False, False)
def test_perf_samples_are_a_profile_or_one_line(tmp_path: Path, data: bytes, packed: bool, cut: bool) -> None:
    path = _written(tmp_path, "profile.perf", data, packed, cut)
    try:
        read_samples(path)
    except ProfileError as exc:
        one_line(str(exc))


@FAST
@given(st.one_of(HEAPTRACK_LINES, st.binary(max_size=200)), st.booleans())
def test_a_heaptrack_trace_is_a_peak_or_one_line(tmp_path: Path, data: bytes, cut: bool) -> None:
    path = _written(tmp_path, "profile.heaptrack", data, True, cut)
    try:
        read_heaptrack(path)
    except DamagedProfile as exc:
        one_line(str(exc))
