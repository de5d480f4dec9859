"""Property-based tests (hypothesis) of the parsers that take user strings (issue 32): parameter values, store
strings and URLs, --env specs and pins, --git values, names, and the credentials taken out of URLs.

Each parser either returns what it promises or raises its own one-line error, for any string: never another
exception, never a message with a line break or a raw control character, never a password it was handed. Bounded
(`max_examples`) so the file runs in seconds, in the fast tier."""

from __future__ import annotations

import os
import shlex
import string
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from colbench.git import GitSourceError, check_source, is_url, split_credentials
from colbench.model.env_request import EnvError, parse_env, parse_pins
from colbench.model.params import Param, ParamError, parse_param_option, positive
from colbench.paths import NAME_PATTERN, UnsafePath, check_name, inside
from colbench.redact import MASK, document_text, printable, redact
from colbench.store import check_store_url, is_postgres_url
from colbench.store.base import StoreError

#: COLBENCH_PROPERTY_EXAMPLES=5000 searches harder, by hand (the tier keeps 150: a few seconds for the file)
FAST = settings(max_examples=int(os.environ.get("COLBENCH_PROPERTY_EXAMPLES", "150")), deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

#: any text a user (or a shared store) can hand over: every character class, control characters and surrogates
#: left out only where Python could not pass them as argv
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)
#: text biased towards the characters parsers split on
SHAPED = st.lists(st.sampled_from(list("ab=,:/@.-_ \t\n\x1b\x00%?#[]'\"~") + ["==", "://", "git+", ".."]),
                  max_size=30).map("".join)
ANY = st.one_of(TEXT, SHAPED)
SECRET = st.text(string.ascii_letters + string.digits, min_size=6, max_size=16).map(lambda s: "Pw" + s)


def one_line(message: str) -> None:
    assert "\n" not in message and "\r" not in message, repr(message)
    assert "\x1b" not in message and "\x00" not in message and "\x07" not in message, repr(message)


# ------------------------------------------------------------------------------------------------- names


@FAST
@given(ANY)
def test_a_name_is_one_plain_component_or_refused(tmp_path: Path, name: str) -> None:
    try:
        checked = check_name(name, "name")
    except UnsafePath as exc:
        one_line(str(exc))
        return
    assert checked == name and NAME_PATTERN.fullmatch(name) and "/" not in name and name not in (".", "..")
    assert inside(tmp_path, name).parent == tmp_path


# -------------------------------------------------------------------------------------------- parameters

PARAMS = [Param("duration", (1.0,), float, check=positive), Param("rows", (10,), int), Param("flag", (True,), bool),
          Param("reader", ("pyarrow",), str, choices=("pyarrow", "polars", "pandas")), Param("name", ("x",), str)]


@FAST
@given(ANY)
def test_a_param_option_is_a_name_and_values_or_refused(option: str) -> None:
    try:
        name, values = parse_param_option(option)
    except ParamError as exc:
        one_line(str(exc))
        return
    assert name and name == name.strip() and values and all(v and v == v.strip() for v in values)
    assert "=" in option and name == option.partition("=")[0].strip()


@FAST
@given(st.sampled_from(PARAMS), ANY)
def test_a_param_value_is_typed_and_valid_or_refused(param: Param, text: str) -> None:
    try:
        value = param.parse(text)
    except ParamError as exc:
        assert len(str(exc)) < 400  # a 10,000-character value is quoted by its start
        assert "\n" not in str(exc)
        return
    assert isinstance(value, param.type) and param.validate(value) == value


@FAST
@given(st.from_regex(r"[a-z_]{1,10}", fullmatch=True),
       st.lists(st.from_regex(r"[A-Za-z0-9._+-]{1,8}", fullmatch=True), min_size=1, max_size=4))
def test_a_written_param_option_reads_back(name: str, values: list[str]) -> None:
    assert parse_param_option(f"{name}={','.join(values)}") == (name, values)


# ------------------------------------------------------------------------------------------ stores and URLs


@FAST
@given(ANY)
def test_a_store_string_is_postgres_a_duckdb_file_or_refused(url: str) -> None:
    try:
        check_store_url(url)
    except StoreError as exc:
        assert "\n" not in str(exc)
        return
    assert is_postgres_url(url) or url.strip().endswith(".duckdb") or Path(url).expanduser().is_file()


@FAST
@given(SECRET, st.sampled_from(["host=db password={} dbname=x", "mysql://me:{}@db/x", "sqlite://u:{}@/x",
                                "md:token={}", "user=me password={}", "password={}"]))
def test_a_refused_store_string_never_echoes_its_password(secret: str, shape: str) -> None:
    with pytest.raises(StoreError) as refused:
        check_store_url(shape.format(secret))
    assert secret not in str(refused.value)


HOST = st.from_regex(r"[a-z]{1,8}(\.[a-z]{1,5})?(:[0-9]{2,5})?", fullmatch=True)
URL_PATH = st.from_regex(r"(/[a-z0-9._-]{0,8}){0,3}", fullmatch=True)


@FAST
@given(st.sampled_from(["http", "https", "git+https", "postgresql"]),
       st.text(string.ascii_letters, min_size=1, max_size=8), SECRET, HOST, URL_PATH)
def test_redaction_masks_every_password_in_a_url(scheme: str, user: str, secret: str, host: str, path: str) -> None:
    url = f"{scheme}://{user}:{secret}@{host}{path}"
    shown = redact(f"error: cannot reach {url} (argv: --store {url})")
    assert secret not in shown and f"{user}:{MASK}@{host}" in shown


# --------------------------------------------------------------------------------------- --env specs and pins


@FAST
@given(ANY)
def test_an_env_option_is_a_named_spec_or_refused(tmp_path: Path, option: str) -> None:
    try:
        spec = parse_env(option, cwd=tmp_path)
    except EnvError as exc:
        assert "\n" not in str(exc)
        return
    assert NAME_PATTERN.fullmatch(spec.name) and (spec.requirements or spec.pins or spec.kind == "current")


@FAST
@given(ANY)
def test_a_runtime_pin_is_exact_or_refused(spec: str) -> None:
    try:
        pins = parse_pins("a", shlex.split(spec))
    except (EnvError, ValueError) as exc:
        assert "\n" not in str(exc)
        return
    assert pins and all(package and (version is None or "==" not in version) for package, version in pins)


@FAST
@given(ANY)
def test_current_env_variables_are_key_value_or_refused(spec: str) -> None:
    try:
        env = parse_env("a=@current " + spec)
    except (EnvError, UnsafePath) as exc:
        assert "\n" not in str(exc)
        return
    assert all(key and "=" not in key for key in env.variables)


# ------------------------------------------------------------------------------------------------ --git values


@FAST
@given(st.one_of(ANY, ANY.map(lambda s: "-" + s), ANY.map(lambda s: "https://" + s), ANY.map(lambda s: "git@" + s)))
def test_a_git_value_is_a_url_or_a_directory_never_an_option(tmp_path: Path, value: str) -> None:
    try:
        checked = check_source(value)
    except GitSourceError as exc:
        one_line(str(exc))
        return
    assert checked == value and not value.startswith("-")
    assert not any(c.isspace() or ord(c) < 32 for c in value) if is_url(value) else Path(value).expanduser().is_dir()


@FAST
@given(st.sampled_from(["https", "http", "git+https"]), st.text(string.printable.strip(), min_size=1, max_size=12),
       SECRET, st.from_regex(r"[a-z]{1,8}\.[a-z]{2,4}(:[0-9]{2,5})?", fullmatch=True),
       st.from_regex(r"(/[a-z0-9._-]{1,8}){1,3}", fullmatch=True))  # a requirement's URL has a path before @ref
def test_credentials_come_out_of_a_url_whole(scheme: str, user: str, secret: str, host: str, path: str) -> None:
    url = f"pkg @ {scheme}://{quote(user, safe='')}:{quote(secret, safe='')}@{host}{path}@v1"
    clean, (credential,) = split_credentials(url)
    assert clean == f"pkg @ {scheme}://{host}{path}@v1"
    assert (credential.username, credential.password) == (user, secret)
    assert credential.origin == f"{scheme.removeprefix('git+')}://{host}"
    assert secret not in clean and quote(secret, safe="") not in clean


@FAST
@given(ANY)
def test_text_without_a_login_passes_through(text: str) -> None:
    assume("@" not in text)
    assert split_credentials(text) == (text, ())


# ------------------------------------------------------------------------------------------ text shown to people


@FAST
@given(TEXT)
def test_printable_and_document_text_leave_no_control_character(text: str) -> None:
    shown, document = printable(text), document_text(text)
    assert not any(ord(c) < 32 and c != "\t" or 0x7F <= ord(c) <= 0x9F for c in shown)
    assert not any((ord(c) < 32 and c not in "\t\n\r") or 0x7F <= ord(c) <= 0x9F for c in document)
    assert len(document) == len(text)  # one character for one: positions and widths stay
