"""A user's own colbench benchmark (a plugin installed beside colbench, docs/writing-benchmarks.md) reaches an
environment colbench builds: its files and metadata grafted into a folder a `.pth` of the environment names, so the
environment's interpreter finds its entry point, and the import check before a run finds what an environment lacks."""

from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from colbench.runtimes import benchmark_code

PLUGIN = '''from colbench.benchmarks.placebo import Placebo


class Mine(Placebo):
    name = "my-grafted-bench"
'''


def _record(files: dict[str, str]) -> str:
    lines = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(text.encode())}")
    return "\n".join(lines) + "\n"


def install_plugin(site: Path) -> None:
    """A wheel-installed plugin as pip or uv leaves it in a site folder: its module, METADATA, entry points, RECORD."""
    info = "my_grafted-0.1.0.dist-info"
    files = {"my_grafted.py": PLUGIN,
             f"{info}/METADATA": "Metadata-Version: 2.1\nName: my-grafted\nVersion: 0.1.0\n",
             f"{info}/entry_points.txt": "[colbench.benchmarks]\nmy-grafted-bench = my_grafted:Mine\n"}
    for name, text in files.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text)
    (site / f"{info}/RECORD").write_text(_record(files) + f"{info}/RECORD,,\n")


def test_a_plugin_is_grafted_into_an_environment_and_found_there(tmp_path, monkeypatch):
    site, env_site = tmp_path / "colbench-site", tmp_path / "home" / "envs" / "an-env" / "site-packages"
    site.mkdir()
    env_site.mkdir(parents=True)
    install_plugin(site)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    benchmark_code.graft_plugins(env_site)
    pth = (env_site / benchmark_code.PLUGINS_PTH).read_text().splitlines()
    folder = Path(pth[0])
    assert folder.is_relative_to(tmp_path / "home") and (folder / "my_grafted.py").is_file()
    assert (folder / "my_grafted-0.1.0.dist-info" / "entry_points.txt").is_file()
    # an interpreter that has the environment's site folder (as a venv's site-packages) finds the benchmark
    src = Path(__file__).resolve().parents[2] / "src"
    probe = {"benchmark:my-grafted-bench": "benchmark 'my-grafted-bench'", "module:no_such_module_here": "nothing"}
    code = f"import site; site.addsitedir({str(env_site)!r}); import sys; sys.argv[1:] = sys.argv[1:]; " \
           f"exec({benchmark_code.PROBE!r})"
    import json

    out = subprocess.run([sys.executable, "-c", code, json.dumps(sorted(probe))], capture_output=True, text=True,
                         env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"}, check=True)
    missing = json.loads(out.stdout.strip().splitlines()[-1])
    assert list(missing) == ["module:no_such_module_here"], missing  # the plugin imports, the other does not


def test_no_plugin_no_path_file(tmp_path, monkeypatch):
    monkeypatch.setenv("COLBENCH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(benchmark_code, "_plugin_dists", lambda: [])
    env_site = tmp_path / "home" / "envs" / "an-env" / "site-packages"
    env_site.mkdir(parents=True)
    (env_site / benchmark_code.PLUGINS_PTH).write_text("/old\n")
    benchmark_code.graft_plugins(env_site)
    assert not (env_site / benchmark_code.PLUGINS_PTH).exists()


@pytest.mark.parametrize(("asked", "expected"), [(("pyarrow==21.0.0",), ["asv_runner>=0.2", "pympler"]),
                                                 (("asv-runner==0.1.0", "pyarrow"), ["pympler"])])
def test_a_sources_requirements_yield_to_the_spec(asked, expected):
    from colbench.model.env_request import EnvRequest
    from colbench.runtimes.builders import uv_builder
    from colbench.runtimes.python import benchmark_needs

    request = EnvRequest("a", "uv", asked).for_benchmarks(("asv_runner>=0.2", "pympler"))
    spec, text = uv_builder().spec(request)
    assert benchmark_needs(spec) == expected
    assert text == " ".join(asked)  # the spec in words is what was asked for
