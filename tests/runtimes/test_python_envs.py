import json
import subprocess
import time
from pathlib import Path

import pytest

from colbench.model.env_request import parse_env
from colbench.runtimes.builders import uv_builder
from colbench.runtimes.env_cache import MARKER, clean_environments, list_environments
from colbench.runtimes.python import (
    WORKER_PTH,
    EnvError,
    EnvSpec,
    ensure_environment,
    spec_package_names,
)

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def parse_env_option(option: str, cwd: Path | None = None) -> EnvSpec:
    """What uv resolves for an `--env` option: parsed at the CLI's edge, made a uv spec by the uv builder."""
    return uv_builder().spec(parse_env(option, cwd))[0]


def test_parse_requirements():
    spec = parse_env_option("new=pyarrow==26.0.1 pandas<3")
    assert spec == EnvSpec("new", ("pyarrow==26.0.1", "pandas<3"))
    assert spec.text == "pyarrow==26.0.1 pandas<3"
    assert parse_env_option("old=pyarrow>=14,<15").requirements == ("pyarrow>=14,<15",)


def test_parse_local_wheel_source_dir_and_git(tmp_path):
    wheel = tmp_path / "pyarrow-15.0.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    wheel.write_bytes(b"not really a wheel")
    src = tmp_path / "arrow" / "python"
    src.mkdir(parents=True)
    (src / "pyproject.toml").write_text('[project]\nname = "pyarrow"\n')
    spec = parse_env_option(f"dev={wheel.name} ./arrow/python", cwd=tmp_path)
    assert spec.requirements == (str(wheel), str(src))
    assert spec_package_names(spec.requirements) == {"pyarrow"}
    git = parse_env_option("head=git+https://github.com/pola-rs/polars@py-1.0.0#subdirectory=py-polars")
    assert git.requirements[0].startswith("git+https://")
    named = parse_env_option("head=polars @ git+https://github.com/pola-rs/polars@main")
    assert named.requirements == ("polars @ git+https://github.com/pola-rs/polars@main",)
    assert spec_package_names(named.requirements) == {"polars"}
    assert spec_package_names(("Pandas_Stubs>=2", "numpy<2")) == {"pandas-stubs", "numpy"}


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("pyarrow==15.0.2", "NAME=SPEC"),
        ("pyarrow", "NAME=SPEC"),
        ("=pyarrow==15", "NAME=SPEC"),
        ("old=", "empty spec"),
        ("bad name=pyarrow", "letters, digits"),
        ("old=pyarrow=1.0", "not a requirement"),
        ("old=./no/such/dir", "no such file"),
        ("old=git+nowhere", "not a git URL"),
        ("old='unbalanced", "cannot split"),
    ],
)
def test_parse_errors_are_one_line(option, message):
    with pytest.raises(EnvError, match=message) as info:
        parse_env_option(option)
    assert "\n" not in str(info.value)


def test_parse_rejects_files_that_are_not_wheels_or_source_trees(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EnvError, match="not a wheel"):
        parse_env_option("x=./notes.txt", cwd=tmp_path)
    with pytest.raises(EnvError, match="not a Python source tree"):
        parse_env_option("x=./empty", cwd=tmp_path)


@pytest.mark.slow
def test_build_reuse_list_and_clean(tmp_path, monkeypatch):
    """A real environment with an older pyarrow. pyarrow 14 wheels are built against NumPy 1.x, so the
    spec pins numpy<2 (without it the import check refuses the environment, tested below)."""
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path))
    spec = parse_env_option("old=pyarrow==14.0.2 numpy<2")
    started = time.monotonic()
    env = ensure_environment(spec, PROJECT_ROOT)
    first = time.monotonic() - started
    assert env.resolved["pyarrow"] == "14.0.2"
    assert env.resolved["numpy"].startswith("1.")
    assert "colbench" not in env.resolved  # colbench is on its path (a .pth naming the checkout's src), not installed
    minor = ".".join(env.python_version.split(".")[:2])
    assert (env.path / "lib" / f"python{minor}" / "site-packages" / WORKER_PTH).read_text().strip() == \
        str(PROJECT_ROOT / "src")
    assert env.path == tmp_path / "envs" / env.key and (env.path / MARKER).is_file()
    assert env.lock_file.read_text().count("pyarrow==14.0.2") == 1
    out = subprocess.run(
        [str(env.python), "-c", "import pyarrow, colbench.worker; print(pyarrow.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "14.0.2"
    site = env.path / "lib" / f"python{minor}" / "site-packages"
    tag = f"cpython-{minor.replace('.', '')}"
    # compiled at build: a worker under PYTHONDONTWRITEBYTECODE does not compile pyarrow in every process
    assert list((site / "pyarrow" / "__pycache__").glob(f"parquet*.{tag}.pyc")) or \
        list((site / "pyarrow" / "parquet" / "__pycache__").glob(f"core.{tag}.pyc"))
    assert list((site / "numpy" / "__pycache__").glob(f"__init__.{tag}.pyc"))
    assert (site / "pyarrow" / "tests").is_dir() and not list((site / "pyarrow" / "tests").rglob("*.pyc"))
    assert json.loads((env.path / MARKER).read_text())["bytecode"] is True

    marker_mtime = (env.path / MARKER).stat().st_mtime_ns
    started = time.monotonic()
    again = ensure_environment(parse_env_option("baseline=numpy<2 pyarrow==14.0.2"), PROJECT_ROOT)
    second = time.monotonic() - started
    assert again.key == env.key and again.name == "baseline"
    assert (env.path / MARKER).stat().st_mtime_ns == marker_mtime  # reused, not rebuilt
    print(f"env build {first:.1f}s, cached {second:.1f}s")

    # an environment built before colbench compiled bytecode at build time is compiled once, when next used
    for pyc in (site / "numpy").rglob("*.pyc"):
        pyc.unlink()
    meta = json.loads((env.path / MARKER).read_text())
    del meta["bytecode"]
    (env.path / MARKER).write_text(json.dumps(meta))
    heard: list[str] = []
    ensure_environment(spec, PROJECT_ROOT, say=heard.append)
    assert list((site / "numpy" / "__pycache__").glob(f"__init__.{tag}.pyc"))
    assert json.loads((env.path / MARKER).read_text())["bytecode"] is True
    assert any("compiling its bytecode once" in line for line in heard)
    heard.clear()
    ensure_environment(spec, PROJECT_ROOT, say=heard.append)
    assert not any("compiling" in line for line in heard)

    listed = list_environments()
    assert [e.key for e in listed] == [env.key] and listed[0].name == "old"
    assert not [p for p in (tmp_path / "envs").iterdir() if p.name.startswith(".")]  # no leftovers
    with pytest.raises(EnvError, match="no environment"):
        clean_environments(["nope"])
    assert clean_environments([env.key[:6]]) == [env.key]
    assert list_environments() == []


def test_broken_environment_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path))
    with pytest.raises(EnvError, match="numpy<2"):
        ensure_environment(parse_env_option("old=pyarrow==14.0.2"), PROJECT_ROOT)
    assert list_environments() == []
    assert clean_environments() == []


def test_unresolvable_spec(tmp_path, monkeypatch):
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path))
    with pytest.raises(EnvError, match="resolving environment 'x'"):
        ensure_environment(parse_env_option("x=pyarrow==0.0.1.dev999"), PROJECT_ROOT)


def test_uv_is_found_through_UV_when_it_is_not_on_PATH(monkeypatch):
    """`uv run` names its executable in $UV: with uv off PATH (a fresh machine after ./bootstrap.sh) --env still
    finds it, and the uv found runs."""
    from colbench.runtimes.python import _uv

    real = _uv()
    assert subprocess.run([*real, "--version"], capture_output=True, text=True).stdout.startswith("uv ")
    if len(real) == 1:
        monkeypatch.setenv("UV", real[0])
        monkeypatch.setenv("PATH", "/nonexistent")
        assert _uv() == real
    monkeypatch.setenv("UV", "/nonexistent/uv")  # a stale $UV is passed over, not trusted
    monkeypatch.setenv("PATH", str(Path(real[0]).parent) if len(real) == 1 else "/nonexistent")
    assert subprocess.run([*_uv(), "--version"], capture_output=True, text=True).stdout.startswith("uv ")


def test_clean_takes_keys_never_paths(tmp_path, monkeypatch):
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    (tmp_path / "home" / "envs").mkdir(parents=True)
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "keep").write_text("keep")
    (tmp_path / "home" / "envs" / "0123456789abcdef").symlink_to(decoy, target_is_directory=True)
    for key in ("", ".", "..", "../decoy", str(decoy)):
        with pytest.raises(ValueError, match="environment key"):
            clean_environments([key])
    assert clean_environments(["0123"]) == ["0123456789abcdef"]  # the link goes, what it points to stays
    assert (decoy / "keep").read_text() == "keep"
