"""Released versions of a library, in version order: what `colbench bisect --package` walks and `colbench watch`
asks for.

- Python packages from the package index uv installs from, read through the Simple Repository API (JSON per PEP
  691 where the index offers it, else the HTML of PEP 503). Which index that is follows uv's own settings
  (`index_urls`): `--index URL` when given; else the indexes uv searches first (`UV_INDEX`, `UV_EXTRA_INDEX_URL`,
  the `[[index]]` and `extra-index-url` of uv's uv.toml), then its default index (`UV_DEFAULT_INDEX`,
  `UV_INDEX_URL`, `PIP_INDEX_URL`, uv.toml's default, else PyPI); a package is listed from the first that has it,
  as uv's first-index strategy installs it. The versions are the ones that have files; each file says whether it
  is yanked, when it was uploaded (PEP 700, in the JSON of indexes that give it, PyPI's among them), and a wheel's
  tags which Python it installs on: a release is measured on the newest installed Python its wheels support
  (runtimes/interpreters.py), and resolved as of its upload (runtimes/era.py).
- Arrow Java from Maven Central's `maven-metadata.xml` of `org.apache.arrow:arrow-vector`.

Order is `packaging.version` order, never the index's. Pre-releases (and dev releases) are left out unless asked
for. A version in the range that cannot be tested is kept with a note (yanked; no wheel for this interpreter when
the package ships wheels, since building such a release from source takes hours) so the bisect can say why it
skipped it.
"""

from __future__ import annotations

import functools
import json
import os
import re
import tomllib
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable, Iterable, Sequence
from html.parser import HTMLParser
from pathlib import Path

from packaging.tags import Tag
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from colbench.bounded_http import NetError, request, status_problem
from colbench.model.packages import canonical_name
from colbench.model.release import Release as Release  # listed here, defined in the model that carries it
from colbench.redact import redact
from colbench.runtimes.interpreters import (
    Interpreter,
    installed_interpreters,
    interpreter_tags,
    newest_supporting,
    versions_text,
    wheel_pythons,
)

PYPI_SIMPLE = "https://pypi.org/simple"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"
ARROW_JAVA = ("org.apache.arrow", "arrow-vector")
_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"
#: what each answer's content type must hold (an index page is JSON or HTML; Maven's metadata is XML)
_CONTENT_TYPES = {"application/xml": ("xml",)}

#: fetch(url, accept) → (content type, body)
Fetch = Callable[[str, str], tuple[str, str]]


class ReleaseError(ValueError):
    """Versions that cannot be listed, or a range that makes no sense; one line that says what to do."""


def fetch_url(url: str, accept: str, deadline_s: float | None = None) -> tuple[str, str]:
    """(content type, text) of an index page or a metadata file, within one total deadline (colbench.bounded_http);
    FileNotFoundError on 404, else a one-line ReleaseError saying what the server did."""
    try:
        answer = request(url, headers={"Accept": accept, "User-Agent": "colbench"}, deadline_s=deadline_s,
                         content_types=_CONTENT_TYPES.get(accept, ("json", "html")))
    except NetError as exc:
        raise ReleaseError(str(exc)) from None
    if answer.status == 404:
        raise FileNotFoundError(url)
    if not answer.ok:
        raise ReleaseError(str(status_problem(answer, f"the package index at {url}")))
    return answer.headers.get("Content-Type", ""), answer.body.decode("utf-8", "replace")


def _entries(value: str) -> list[str]:
    """URLs of an index setting: space-separated, each perhaps `name=URL` (uv's `UV_INDEX`)."""
    urls = []
    for entry in value.split():
        name, sep, url = entry.partition("=")
        urls.append((url if sep and "://" in url and "://" not in name else entry).rstrip("/"))
    return urls


def _uv_config() -> dict[str, object]:
    """uv's own configuration file, as uv finds it: `UV_CONFIG_FILE`, else the user's uv.toml, else the
    system's (none with `UV_NO_CONFIG`)."""
    if os.environ.get("UV_NO_CONFIG"):
        return {}
    named = os.environ.get("UV_CONFIG_FILE")
    xdg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    system = [Path(d) / "uv" / "uv.toml" for d in (os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":")]
    candidates = [Path(named)] if named else [Path(xdg) / "uv" / "uv.toml", *system, Path("/etc/uv/uv.toml")]
    for path in candidates:
        try:
            return tomllib.loads(path.read_text())
        except FileNotFoundError:
            continue
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ReleaseError(f"cannot read uv's configuration {path}: {exc}") from None
    return {}


def _config_urls(config: dict[str, object]) -> tuple[list[str], str | None]:
    """(indexes searched first, the default index) of a uv.toml (its `[pip]` section's too)."""
    first: list[str] = []
    default: str | None = None
    for section in (config, config.get("pip") if isinstance(config.get("pip"), dict) else {}):
        assert isinstance(section, dict)
        for index in section.get("index") or []:
            if isinstance(index, dict) and isinstance(index.get("url"), str) and not index.get("explicit"):
                if index.get("default"):
                    default = default or index["url"].rstrip("/")
                else:
                    first.append(index["url"].rstrip("/"))
        extra = section.get("extra-index-url") or []
        first += [u.rstrip("/") for u in ([extra] if isinstance(extra, str) else extra) if isinstance(u, str)]
        if isinstance(section.get("index-url"), str):
            default = default or str(section["index-url"]).rstrip("/")
    return first, default


def index_urls(index: str | None = None) -> list[str]:
    """The indexes a package's releases are listed from, in the order uv searches them (first-index: the first
    that has the package is the one uv installs it from); `index` (`--index URL`) alone when given."""
    if index:
        return [index.strip().rstrip("/")]
    config_first, config_default = _config_urls(_uv_config())
    first = [*_entries(os.environ.get("UV_INDEX", "")), *config_first,
             *_entries(os.environ.get("UV_EXTRA_INDEX_URL", ""))]
    default = next((_entries(value)[0] for value in (os.environ.get(name, "").strip() for name in
                                                      ("UV_DEFAULT_INDEX", "UV_INDEX_URL", "PIP_INDEX_URL"))
                    if value), config_default or PYPI_SIMPLE)
    return list(dict.fromkeys([*first, default]))


def package_index() -> str:
    """The default index uv installs from (the last one it searches)."""
    return index_urls()[-1]


# ---------------------------------------------------------------------------------------------------- PyPI


class _Anchors(HTMLParser):
    """File names and yanked flags of a PEP 503 HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[dict[str, object]] = []
        self._attrs: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._attrs = dict(attrs)

    def handle_data(self, data: str) -> None:
        if self._attrs is not None and data.strip():
            self.files.append({"filename": data.strip(), "yanked": "data-yanked" in self._attrs})

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._attrs = None


#: the longest file name an index entry may have: no file system holds a longer one (a 5,000-digit version is skipped
#: here, before Python parses it)
MAX_FILENAME = 255


def _files(content_type: str, body: str) -> list[dict[str, object]]:
    """The file entries of an index page; a page that is not the Simple API's JSON or HTML is a ValueError."""
    if "json" in content_type:
        try:
            page = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise ValueError(f"not JSON ({str(exc)[:100]})") from None
        files = page.get("files") if isinstance(page, dict) else None
        if not isinstance(files, list):
            raise ValueError("its JSON has no list of files (PEP 691)")
        return files
    parser = _Anchors()
    parser.feed(body)
    return parser.files


def checked_files(files: Iterable[object], notes: list[str] | None = None) -> list[dict[str, object]]:
    """The entries of an index's file list that are what PEP 691 says (an object with a string `filename`, a
    `yanked` that is a bool or a reason, an `upload-time` string); every other entry is skipped, counted in one
    note (appended to `notes`)."""
    kept: list[dict[str, object]] = []
    bad = 0
    for entry in files:
        if (isinstance(entry, dict) and isinstance(entry.get("filename"), str)
                and 0 < len(entry["filename"]) <= MAX_FILENAME
                and isinstance(entry.get("yanked"), (bool, str, type(None)))
                and isinstance(entry.get("upload-time"), (str, type(None)))):
            kept.append(entry)
        else:
            bad += 1
    if bad and notes is not None:
        notes.append(f"skipped {bad} index entr{'y' if bad == 1 else 'ies'} that are not a file of PEP 691 (a "
                     "wrong type, or a name too long)")
    return kept


def releases_from_files(package: str, files: Iterable[object], tags: frozenset[Tag] | None = None,
                        interpreters: Sequence[Interpreter] | None = None,
                        notes: list[str] | None = None) -> list[Release]:
    """Versions (in version order) from an index's file list, each with why it cannot be tested here, if so, and the
    newest of `interpreters` (default: the installed ones) its wheels install on. `tags`: the wheel tags that count
    as installable instead (one interpreter's), when given."""
    if tags is None:
        interpreters = installed_interpreters() if interpreters is None else interpreters
        supported = frozenset().union(*(interpreter_tags(i.version[:2]) for i in interpreters))
    else:
        supported, interpreters = tags, []
    seen, wheel_tags, uploaded = _files_by_version(canonical_name(package), checked_files(files, notes), supported)
    ships_wheels = any(f["wheel"] for f in seen.values())
    out = []
    for version in sorted(seen):
        flags = seen[version]
        tags_of = frozenset(wheel_tags.get(version, ()))
        skip = ""
        if not flags["live"]:
            skip = "yanked"
        elif not flags["wheel"] and (ships_wheels or not flags["sdist"]):
            skip = _no_wheel(tags_of, interpreters, bool(flags["sdist"]))
        best = newest_supporting(tags_of, interpreters) if interpreters else None
        out.append(Release(str(version), skip, best.minor if best else "", tags_of, uploaded.get(version, "")))
    return out


def _files_by_version(name: str, files: Iterable[dict[str, object]], supported: frozenset[Tag]
                      ) -> tuple[dict[Version, dict[str, bool]], dict[Version, set[Tag]], dict[Version, str]]:
    """Per version of the package `name`: which kinds of file it has (a wheel installable here, another wheel, an
    sdist) and whether one is not yanked; its wheels' tags; its latest upload time."""
    seen: dict[Version, dict[str, bool]] = {}
    wheel_tags: dict[Version, set[Tag]] = {}
    uploaded: dict[Version, str] = {}
    for file in files:
        filename = str(file.get("filename", ""))
        parsed = _parse_file_name(filename, supported)
        if parsed is None or canonical_name(parsed[0]) != name:
            continue
        _, version, kind, file_tags = parsed
        flags = seen.setdefault(version, {"wheel": False, "sdist": False, "other wheel": False, "live": False})
        flags[kind] = True
        flags["live"] = flags["live"] or not file.get("yanked")
        if filename.endswith(".whl") and not file.get("yanked"):
            wheel_tags.setdefault(version, set()).update(file_tags)
        stamp = file.get("upload-time")
        if isinstance(stamp, str) and not file.get("yanked"):
            uploaded[version] = max(uploaded.get(version, ""), stamp)
    return seen, wheel_tags, uploaded


def _parse_file_name(filename: str, supported: frozenset[Tag]) -> tuple[str, Version, str, frozenset[Tag]] | None:
    """(distribution, version, kind, wheel tags) of a wheel or sdist file name; None for anything else."""
    try:
        if filename.endswith(".whl"):
            dist, version, _, file_tags = parse_wheel_filename(filename)
            return dist, version, "wheel" if file_tags & supported else "other wheel", file_tags
        dist, version = parse_sdist_filename(filename)
        return dist, version, "sdist", frozenset()
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion, ValueError):
        return None  # ValueError: a version past Python's int limit (4,300 digits) is no version either


def _no_wheel(tags: frozenset[Tag], interpreters: Sequence[Interpreter], sdist: bool) -> str:
    if not interpreters:
        return "no wheel for this interpreter" + (" (a source build only)" if sdist else "")
    pythons = wheel_pythons(tags)
    has = f"its wheels are for Python {', '.join(pythons)}" if pythons else \
        ("its wheels are for other platforms" if tags else "it has no wheels")
    return (f"no wheel for any installed Python ({has}{'; otherwise a source build' if sdist else ''}; installed: "
            f"{versions_text(interpreters)})")


def check_package_name(package: str) -> None:
    if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", package):
        raise ReleaseError(f"--package {package!r}: not a Python distribution name")


def pypi_releases(package: str, fetch: Fetch = fetch_url, index: str | None = None,
                  notes: list[str] | None = None) -> list[Release]:
    """Every version of `package` on the index, oldest first; entries of the page that are not files are skipped
    (a note in `notes`), a page that is not an index page is a one-line ReleaseError."""
    check_package_name(package)
    return _index_releases(package, fetch, index, notes)


def _index_releases(package: str, fetch: Fetch, index: str | None, notes: list[str] | None) -> list[Release]:
    """`pypi_releases` of a name already checked."""
    base = index or package_index()
    url = f"{base}/{canonical_name(package)}/"
    try:
        content_type, body = fetch(url, _ACCEPT)
    except FileNotFoundError:
        raise ReleaseError(redact(f"--package {package}: no such package on {base} (check the name)")) from None
    try:
        releases = releases_from_files(package, _files(content_type, body), notes=notes)
    except ValueError as exc:
        raise ReleaseError(redact(f"cannot read the index page {url}: {exc}")) from None
    if not releases:
        raise ReleaseError(redact(f"--package {package}: {base} lists no files of it"))
    return releases


def listed_releases(package: str, index: str | None = None, fetch: Fetch = fetch_url,
                    deadline_s: float | None = None, notes: list[str] | None = None) -> tuple[str, list[Release]]:
    """(the index that has `package`, its versions oldest first), searching uv's indexes in uv's order (or only
    `index`), each call within `deadline_s` (None: $COLBENCH_NET_DEADLINE_S, else a minute); a one-line ReleaseError
    when none has it or one cannot be read."""
    check_package_name(package)
    return releases_on_indexes(package, index, fetch, deadline_s, notes)


def releases_on_indexes(package: str, index: str | None = None, fetch: Fetch = fetch_url,
                        deadline_s: float | None = None, notes: list[str] | None = None) -> tuple[str, list[Release]]:
    """`listed_releases` of a name its caller checked at its edge (a watch's request, `check_package_name`): the
    rule runs once a pass, not at every layer the name goes through."""
    if deadline_s is not None and fetch is fetch_url:
        fetch = functools.partial(fetch_url, deadline_s=deadline_s)
    urls = index_urls(index)
    for base in urls:
        try:
            return base, _index_releases(package, fetch, base, notes)
        except ReleaseError as exc:
            if "no such package" not in str(exc) or base == urls[-1]:
                raise
    raise AssertionError("unreachable: the last index raises")  # pragma: no cover


def newer_releases(releases: Sequence[Release], than: str | None, *, pre: bool = False) -> list[Release]:
    """The releases after `than` (all when None), oldest first: pre-releases only with `pre`, yanked ones never."""
    floor = Version(than) if than is not None else None
    return [r for r in releases if (floor is None or Version(r.version) > floor) and r.skip != "yanked"
            and (pre or not Version(r.version).is_prerelease)]


# --------------------------------------------------------------------------------------------------- Maven


def maven_releases(group: str = ARROW_JAVA[0], artifact: str = ARROW_JAVA[1], fetch: Fetch = fetch_url,
                   minimum: str | None = None, why_minimum: str = "") -> list[Release]:
    """Versions of a Maven artifact from maven-metadata.xml, oldest first; those below `minimum` noted."""
    url = f"{MAVEN_CENTRAL}/{group.replace('.', '/')}/{artifact}/maven-metadata.xml"
    try:
        _, body = fetch(url, "application/xml")
        root = ElementTree.fromstring(body)
    except FileNotFoundError:
        raise ReleaseError(f"{group}:{artifact} is not on Maven Central") from None
    except ElementTree.ParseError as exc:
        raise ReleaseError(f"cannot read {url}: {exc}") from None
    versions = []
    for element in root.iter("version"):
        try:
            versions.append(Version((element.text or "").strip()))
        except InvalidVersion:
            continue
    floor = Version(minimum) if minimum else None
    return [Release(str(v), f"older than {minimum}{f' ({why_minimum})' if why_minimum else ''}"
                    if floor is not None and v < floor else "") for v in sorted(set(versions))]


# --------------------------------------------------------------------------------------------------- range


def _parse(text: str, option: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        raise ReleaseError(f"{option} {text!r} is not a version (e.g. 14.0.2)") from None


def _find(releases: Sequence[Release], version: Version) -> int | None:
    for i, release in enumerate(releases):
        if Version(release.version) == version:
            return i
    return None


def _near(releases: Sequence[Release], version: Version) -> str:
    ordered = [Version(r.version) for r in releases]
    below = [str(v) for v in ordered if v < version][-2:]
    above = [str(v) for v in ordered if v > version][:2]
    return ", ".join([*below, *above])


def release_range(releases: Sequence[Release], good: str, bad: str, *, pre: bool = False,
                  what: str = "") -> list[Release]:
    """The releases from `good` to `bad`, both included, oldest first; pre-releases between them only with `pre`.

    One-line ReleaseError when either is not listed, they are equal, or good is the newer."""
    good_v, bad_v = _parse(good, "--good"), _parse(bad, "--bad")
    if good_v == bad_v:
        raise ReleaseError(f"--good and --bad are the same version ({good}): name two")
    if good_v > bad_v:
        raise ReleaseError(f"--good {good} is newer than --bad {bad}: good is the older version (to find where it "
                           "got faster, keep the order and pass --direction faster)")
    for option, version in (("--good", good_v), ("--bad", bad_v)):
        if _find(releases, version) is None:
            near = _near(releases, version)
            raise ReleaseError(f"{option} {version}: {what or 'the package'} has no such release"
                               + (f" (near it: {near})" if near else ""))
    inside = [r for r in releases if good_v <= Version(r.version) <= bad_v]
    return [r for r in inside if pre or not Version(r.version).is_prerelease
            or Version(r.version) in (good_v, bad_v)]
