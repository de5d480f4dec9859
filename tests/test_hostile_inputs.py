"""Hostile but fair input over every command that takes a name, a path or a URL (issue 11).

One table: each row runs the real `colbench` in a subprocess with a sandboxed COLBENCH_HOME and decoy directories
outside it (next to the home, above it, and elsewhere under tmp_path), each holding sentinel files. Every row asserts
the exit code, a one-line message on stderr that holds the expected phrase (exit code 0: the phrase is on stdout),
no traceback, and that every decoy file is still there with its content. Then the secrets: a real run whose argv
carries passwords and tokens, and every place a run is shown, exported, reported or served.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # real processes: the full run, not the fast tier

TINY_RUN = ("run", "placebo", "--param", "duration=0", "--processes", "1", "--iterations", "1", "--warmup", "0")


@dataclass(frozen=True)
class Row:
    id: str
    argv: tuple[str, ...]  # {abs} {next} {above}: decoy directories; {sentinel}: a decoy file; {home}: the home
    code: int
    phrase: str  # in the one stderr line (exit != 0) or on stdout (exit 0)
    setup: str | None = None  # see SETUPS
    gone: str | None = None  # relative to the home: what the command had to remove (a symlink, not its target)
    writes: bool = False  # the user asked for output in a decoy directory (a report, a store copy)


ROWS = [
    # --- data clean: a data set is a known name, never a path -------------------------------------------------
    Row("clean-abs", ("data", "clean", "{abs}"), 2, "unknown data set"),
    Row("clean-dotdot-next", ("data", "clean", "../../../decoy"), 2, "unknown data set"),
    Row("clean-dotdot-above", ("data", "clean", "../../../../decoy"), 2, "unknown data set"),
    Row("clean-dotdot", ("data", "clean", ".."), 2, "unknown data set"),
    Row("clean-dot", ("data", "clean", "."), 2, "unknown data set"),
    Row("clean-empty", ("data", "clean", ""), 2, "unknown data set"),
    Row("clean-inner-dotdot", ("data", "clean", "a/../../../../decoy"), 2, "unknown data set"),
    Row("clean-known-then-dotdot", ("data", "clean", "fanniemae_2016Q4/../../../../decoy"), 2, "unknown data set"),
    Row("clean-downloads-abs", ("data", "clean", "--downloads", "{abs}"), 2, "unknown data set"),
    Row("clean-downloads-dotdot", ("data", "clean", "--downloads", "../../../decoy"), 2, "unknown data set"),
    Row("clean-downloads-empty", ("data", "clean", "--downloads", ""), 2, "unknown data set"),
    Row("clean-stale-dotdot", ("data", "clean", "--stale", "../../../decoy"), 2, "unknown data set"),
    Row("clean-root-abs", ("data", "clean", "--root", "{abs}"), 2, "outside colbench's own directories"),
    Row("clean-root-next-downloads", ("data", "clean", "--downloads", "--root", "{next}"), 2,
        "outside colbench's own directories"),
    Row("clean-root-home-dotdot", ("data", "clean", "--root", "{home}/../decoy"), 2,
        "outside colbench's own directories"),
    Row("clean-symlinked-dataset", ("data", "clean", "fanniemae_2016Q4"), 0, "freed", "linked_dataset",
        gone="data/cache/fanniemae_2016Q4"),
    Row("clean-stale-symlinked-dataset", ("data", "clean", "--stale", "fanniemae_2016Q4"), 0, "freed",
        "linked_dataset"),
    Row("clean-all-symlinked-cache", ("data", "clean"), 0, "freed", "linked_cache", gone="data/cache"),
    Row("clean-symlinked-download", ("data", "clean", "--downloads", "nyctaxi_2010-01"), 0, "freed",
        "linked_download", gone="data/downloads/nyctaxi_2010-01"),
    Row("clean-stale-symlinked-file", ("data", "clean", "--stale"), 0, "freed", "linked_file",
        gone="data/cache/int64_frame/r10-s0/stray.csv"),
    Row("clean-registry-bad-name", ("data", "clean", "../../../decoy"), 2, "fix or delete it", "evil_registry"),
    Row("list-registry-bad-name", ("data", "list"), 2, "fix or delete it", "evil_registry"),
    Row("list-cached-dotdot", ("data", "list", "--cached", "--dataset", "../../../decoy"), 2, "unknown data set"),
    Row("register-dotdot-name", ("data", "register", "../decoy", "{sentinel}"), 2, "bad source name"),
    Row("register-dot-name", ("data", "register", ".", "{sentinel}"), 2, "bad source name"),
    Row("register-url-without-file", ("data", "register", "evil", "http://127.0.0.1:9/.."), 2,
        "cannot tell the file name"),
    Row("unregister-dotdot", ("data", "unregister", "../decoy"), 2, "no user source"),
    Row("get-dotdot", ("data", "get", "../../../decoy"), 2, "unknown source"),
    Row("make-dotdot", ("data", "make", "../../../decoy", "--rows", "10"), 2, "unknown dataset"),
    # --- env clean and --env names --------------------------------------------------------------------------
    Row("env-clean-empty", ("env", "clean", ""), 2, "environment key"),
    Row("env-clean-dotdot", ("env", "clean", "../../decoy"), 2, "environment key"),
    Row("env-clean-abs", ("env", "clean", "{abs}"), 2, "environment key"),
    Row("env-clean-dot", ("env", "clean", "."), 2, "environment key"),
    Row("env-clean-all-symlinked", ("env", "clean"), 0, "removed 1", "linked_env", gone="envs/0123456789abcdef"),
    Row("env-clean-prefix-symlinked", ("env", "clean", "0123"), 0, "removed 1", "linked_env",
        gone="envs/0123456789abcdef"),
    Row("env-name-dotdot-current", (*TINY_RUN, "--env", "../x=@current"), 2, "--env name"),
    Row("env-name-dotdot-current-dry", (*TINY_RUN, "--env", "../x=@current", "--dry-run"), 2, "--env name"),
    Row("env-name-slash-spec-dry", (*TINY_RUN, "--env", "a/b=pyarrow", "--dry-run"), 2, "--env name"),
    Row("env-name-empty", (*TINY_RUN, "--env", "=@current"), 2, "--env name"),
    Row("env-bad-spec-dry", (*TINY_RUN, "--env", "a=pyarrow>>1", "--dry-run"), 2, "not a requirement"),
    Row("env-bad-variable-dry", (*TINY_RUN, "--env", "a=@current NOVALUE", "--dry-run"), 2, "KEY=VALUE"),
    Row("env-same-names-dry", (*TINY_RUN, "--env", "a=@current", "--env", "a=@current", "--dry-run"), 2,
        "must differ"),
    # --- run options ------------------------------------------------------------------------------------------
    Row("memory-limit-zero", (*TINY_RUN, "--memory-limit", "0"), 2, "above 0"),
    Row("memory-limit-negative", (*TINY_RUN, "--memory-limit", "-1GiB"), 2, "cannot read size"),
    Row("memory-limit-garbage", (*TINY_RUN, "--memory-limit", "lots"), 2, "cannot read size"),
    Row("memory-limit-dot", (*TINY_RUN, "--memory-limit", "."), 2, "cannot read size"),
    Row("param-empty-item", ("run", "csv-read", "--param", "reader=pyarrow,,polars", "--dry-run"), 2, "empty value"),
    Row("param-trailing-comma", ("run", "placebo", "--param", "duration=0,", "--dry-run"), 2, "empty value"),
    Row("param-empty-value", ("run", "csv-read", "--param", "reader=", "--dry-run"), 2, "NAME=VALUE"),
    Row("threads-empty-item", ("run", "placebo", "--threads", "1,,2", "--dry-run"), 2, "empty value"),
    Row("resume-with-targets", ("run", "--resume", "latest", "placebo"), 2, "cannot be combined"),
    Row("resume-with-param", ("run", "--resume", "latest", "--param", "duration=1"), 2, "cannot be combined"),
    Row("timeout-zero", (*TINY_RUN, "--timeout", "0"), 2, "--timeout"),
    Row("repo-dotdot", (*TINY_RUN, "--repo", "../../decoy"), 2, "cannot read a git commit"),
    Row("run-name-is-a-name", (*TINY_RUN, "--run-name", "../../decoy"), 0, "(../../decoy)"),
    Row("store-is-a-directory", (*TINY_RUN, "--store", "{abs}"), 2, "is a directory: give a file"),
    Row("every-case-errors", ("run", "placebo", "--param", "error=exception", "--processes", "1", "--iterations", "1",
                              "--warmup", "0"), 3, "every case"),
    Row("unknown-option", ("run", "--bogus"), 2, "No such option"),
    # --- watch: refused before any index is asked ---------------------------------------------------------
    Row("watch-package-dotdot", ("watch", "placebo", "--package", "../../decoy"), 2, "not a Python distribution"),
    Row("watch-webhook-file", ("watch", "placebo", "--package", "pyarrow", "--notify", "file://{sentinel}"), 2,
        "http:// or https://"),
    Row("watch-since-garbage", ("watch", "placebo", "--package", "pyarrow", "--since", "../x"), 2,
        "is not a version"),
    # --- reading commands and outputs -------------------------------------------------------------------------
    Row("show-runs-json", ("show", "--runs", "--format", "json"), 0, '"run_id"', "store"),
    Row("show-bad-run", ("show", "../../decoy"), 2, "no run", "store"),
    Row("compare-bad-run", ("compare", "../../decoy", "latest"), 2, "neither a run", "store"),
    Row("report-into-decoy", ("report", "latest", "--no-history", "-o", "{abs}"), 0, "wrote", "store", writes=True),
    Row("report-onto-file", ("report", "latest", "-o", "{sentinel}"), 2, "not a directory", "store"),
    Row("report-under-file", ("report", "latest", "-o", "{sentinel}/sub"), 2, "cannot write", "store"),
    Row("delete-dotdot-run", ("delete", "../../decoy", "--yes"), 2, "no run '../../decoy'", "store"),
    Row("delete-abs-run", ("delete", "{abs}", "--yes"), 2, "no run", "store"),
    Row("delete-dry-run", ("delete", "latest"), 0, "nothing deleted; add --yes", "store"),
    Row("delete-profiles-linked", ("delete", "latest", "--yes"), 0, "deleted run", "linked_profiles"),
    Row("export-onto-directory", ("export", "-o", "{abs}"), 2, "is a directory", "store"),
    Row("export-under-file", ("export", "-o", "{sentinel}/x.parquet"), 2, "cannot write", "store"),
    Row("store-copy-to-directory", ("store", "copy", "{home}/results.duckdb", "{abs}"), 2,
        "is a directory: give a file",
        "store"),
    Row("store-copy-onto-file", ("store", "copy", "{home}/results.duckdb", "{sentinel}"), 2,
        "is not a DuckDB file", "store"),
    Row("store-copy-from-missing", ("store", "copy", "{home}/../decoy/none.duckdb", "{home}/copy.duckdb"), 2,
        "no results store"),
    Row("store-copy-beside-home", ("store", "copy", "{home}/results.duckdb", "{next}/new.duckdb"), 0, "copied 1 run",
        "store", writes=True),
    Row("serve-host-not-an-ip", ("serve", "--host", "not-an-ip"), 2, "--host"),
    Row("serve-host-out-of-range", ("serve", "--host", "256.1.1.1"), 2, "--host"),
    Row("serve-port-zero", ("serve", "--port", "0"), 2, "--port"),
    Row("publish-password-in-url", ("publish", "--conbench", "http://me:HostileS3cret@127.0.0.1:9"), 2,
        "CONBENCH_PASSWORD", "store"),
    Row("publish-not-a-url", ("publish", "--conbench", "../../decoy"), 2, "http(s)://", "store"),
    # --- round 2 (issue 27): symlinks on the way out of the home, store strings, numbers, names ------------------
    Row("env-clean-envs-linked", ("env", "clean"), 2, "is a symlink to", "linked_envs_root"),
    Row("env-clean-key-envs-linked", ("env", "clean", "0123"), 2, "is a symlink to", "linked_envs_root"),
    Row("make-into-linked-dataset", ("data", "make", "nyctaxi_2010-01", "--rows", "500", "--format", "parquet"), 2,
        "is a symlink to", "linked_make"),
    Row("make-into-linked-cache", ("data", "make", "int64_frame", "--rows", "100", "--format", "csv"), 2,
        "is a symlink to", "linked_cache"),
    Row("clean-downloads-data-linked", ("data", "clean", "--downloads"), 2, "COLBENCH_DATA", "linked_data"),
    Row("run-spool-linked", TINY_RUN, 2, "is a symlink to", "linked_spool"),
    Row("store-keyword-dsn", (*TINY_RUN, "--store", "host=127.0.0.1 user=cb password=HostileS3cret dbname=cbdb"), 2,
        "keyword connection string"),
    Row("store-not-duckdb", (*TINY_RUN, "--store", "results.db"), 2, "does not end in .duckdb"),
    Row("store-missing-directory", (*TINY_RUN, "--store", "{abs}/typo/results.duckdb"), 2,
        "does not exist: create it first"),
    Row("show-store-missing", ("show", "--store", "{abs}/typo/results.duckdb"), 2, "no results store"),
    Row("timeout-inf", (*TINY_RUN, "--timeout", "inf"), 2, "--timeout"),
    Row("timeout-nan", (*TINY_RUN, "--timeout", "nan"), 2, "--timeout"),
    Row("scale-inf", (*TINY_RUN, "--scale", "inf", "--dry-run"), 2, "--scale"),
    Row("alpha-nan", (*TINY_RUN, "--env", "a=@current", "--env", "b=@current", "--alpha", "nan", "--dry-run"), 2,
        "--alpha"),
    Row("duration-huge", ("run", "placebo", "--param", "duration=1e308", "--dry-run"), 2, "at most 86400"),
    Row("duration-nan", ("run", "placebo", "--param", "duration=nan", "--dry-run"), 2, "finite number"),
    Row("duration-inf", ("run", "placebo", "--param", "duration=inf", "--dry-run"), 2, "finite number"),
    Row("param-ten-thousand", ("run", "csv-read", "--param", "reader=" + "x" * 10_000, "--dry-run"), 2,
        "more characters"),
    Row("run-name-escape", (*TINY_RUN, "--run-name", "\x1b[31mred\x1b]0;owned\x07"), 2, "control characters"),
    Row("machine-escape", (*TINY_RUN, "--machine", "m\x1b[2J"), 2, "control characters"),
    Row("compare-alpha-nan", ("compare", "latest", "latest", "--alpha", "nan"), 2, "--alpha", "store"),
    # --- round 3 (issue 32): every level of an owned path, bounded network calls, git arguments, dry-run pins -----
    Row("run-store-spool-linked", TINY_RUN, 2, "is a symlink to", "linked_store_spool"),
    Row("run-profile-profiles-linked", (*TINY_RUN, "--profile"), 2, "is a symlink to", "linked_profiles"),
    Row("make-data-linked", ("data", "make", "fanniemae_2016Q4", "--rows", "500", "--format", "csv"), 2,
        "is a symlink to", "linked_data"),
    Row("make-cache-dataset-file-linked", ("data", "make", "int64_frame", "--rows", "10", "--format", "csv"), 2,
        "is a symlink to", "linked_cache_file"),
    Row("register-registry-linked", ("data", "register", "mine", "{sentinel}"), 2, "is a symlink to",
        "linked_registry"),
    Row("get-download-linked", ("data", "get", "mine", "--no-progress"), 2, "is a symlink to", "linked_user_download"),
    Row("bisect-git-option", ("bisect", "placebo", "--param", "duration=0", "--git", "--upload-pack=touch pwned;#://",
                              "--package", "x", "--good", "a", "--bad", "b"), 2, "not an option"),
    Row("bisect-git-option-url", ("bisect", "placebo", "--param", "duration=0", "--git", "-uhttps://h/r", "--package",
                                  "x", "--good", "a", "--bad", "b"), 2, "not an option"),
    Row("bisect-git-no-such-dir", ("bisect", "placebo", "--param", "duration=0", "--git", "{abs}/nope", "--package",
                                   "x", "--good", "a", "--bad", "b"), 2, "neither a URL"),
    Row("bisect-git-ext", ("bisect", "placebo", "--param", "duration=0", "--git", "ext::sh -c touch% pwned",
                           "--package", "x", "--good", "a", "--bad", "b"), 2, "neither a URL"),
    Row("bisect-git-not-a-repository", ("bisect", "placebo", "--param", "duration=0", "--git", "file://{abs}",
                                        "--package", "x", "--good", "a", "--bad", "b"), 2,
        "does not appear to be a git repository"),
    Row("env-pin-cannot-exist-dry", (*TINY_RUN, "--env", "a=pyarrow==999", "--dry-run"), 2,
        "no version of pyarrow==999"),
    Row("store-tilde-no-user", ("show", "--store", "~colbench-no-such-user/x.duckdb"), 2, "names no user"),
    Row("git-tilde-no-user", ("bisect", "placebo", "--param", "duration=0", "--git", "~colbench-no-such-user/r",
                              "--package", "x", "--good", "a", "--bad", "b"), 2, "names no user"),
    Row("net-deadline-zero", ("publish", "--conbench", "http://127.0.0.1:9", "--net-deadline", "0"), 2,
        "a number above 0", "store"),
    Row("net-deadline-env-garbage", ("publish", "--conbench", "http://127.0.0.1:9"), 2, "--net-deadline",
        "store_and_bad_deadline"),
    # --- rows the other helpers of issue 11 add to this table (placeholders) ----------------------------------
    # damaged store (a tail-truncated DuckDB file): show latest / export / report / run → 2, "colbench store info"
    # --store under a file; an unwritable COLBENCH_HOME; a read-only store file opened read-only by reading commands
    # the DuckDB file held by another process for > 30 s: the finished result is kept, and the run says so
    # --store mysql://…: one line, no stray directory, no DuckDB extension download
    # signals: kill -9 / SIGTERM / Ctrl-C of `colbench run` with a hanging worker (no orphan, no colbench-exec-*
    # left); a worker killed by signal 40 → an error result and the run goes on
]


# --------------------------------------------------------------------------------------------- the sandbox


@dataclass
class Sandbox:
    root: Path
    home: Path
    work: Path
    decoys: dict[str, Path]

    @property
    def sentinel(self) -> Path:
        return self.decoys["abs"] / "sentinel.txt"

    def fill(self, text: str) -> str:
        return text.format(home=self.home, sentinel=self.sentinel, **{k: str(v) for k, v in self.decoys.items()})

    def snapshot(self) -> dict[Path, bytes]:
        return {p: p.read_bytes() for d in self.decoys.values() for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    """home = tmp/a/home (data in home/data, cache in home/data/cache); decoys at tmp/a/decoy (next to the home:
    ../../../decoy from the cache), tmp/decoy (above it: ../../../../decoy) and tmp/elsewhere/decoy (absolute)."""
    home = tmp_path / "a" / "home"
    work = tmp_path / "a" / "work"
    decoys = {"next": tmp_path / "a" / "decoy", "above": tmp_path / "decoy", "abs": tmp_path / "elsewhere" / "decoy"}
    for name, decoy in decoys.items():
        for sub in ("", "cache", "downloads", "envs", "cache/fanniemae_2016Q4"):
            (decoy / sub).mkdir(parents=True, exist_ok=True)
            (decoy / sub / "sentinel.txt").write_text(f"decoy {name}/{sub}: must survive\n")
    home.mkdir(parents=True)
    work.mkdir()
    return Sandbox(tmp_path, home, work, decoys)


def cli(box: Sandbox, *args: str, timeout: float = 300, extra_env: dict[str, str] | None = None,
        ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLBENCH_STORE", "COLBENCH_DATA")}
    env.update({"COLBENCH_HOME": str(box.home), "COLUMNS": "200", **(extra_env or {})})
    return subprocess.run([sys.executable, "-m", "colbench", *args], capture_output=True, text=True, env=env,
                          cwd=box.work, timeout=timeout)


@pytest.fixture(scope="session")
def seeded_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DuckDB store holding one tiny real run (made once for all xdist workers), copied into the sandboxes that
    need one."""
    from tests.shared import built_once

    def build(root: Path) -> None:
        box = Sandbox(root, root / "home", root, {})
        done = cli(box, *TINY_RUN)
        assert done.returncode == 0, done.stdout + done.stderr

    return built_once(tmp_path_factory, "hostile-seed", build) / "home" / "results.duckdb"


def _plant_env(box: Sandbox) -> None:
    """$COLBENCH_HOME/envs is a link to a decoy holding what looks like an environment (the issue's probe)."""
    fake = box.decoys["abs"] / "envs" / "0123456789abcdef"
    fake.mkdir(parents=True)
    (fake / "sentinel.txt").write_text("decoy environment: must survive\n")
    _link(box.home / "envs", box.decoys["abs"] / "envs")


def _plant_store_spool(box: Sandbox) -> None:
    """The issue's probe: `spool/<key of the default store>` a link to a decoy holding a file in `results/`."""
    from colbench.store.spool import store_key

    key = store_key("duckdb:" + str((box.home / "results.duckdb").resolve()))
    (box.decoys["abs"] / "results").mkdir()
    (box.decoys["abs"] / "results" / "keep.txt").write_text("not a spooled result: must stay where it is\n")
    _link(box.home / "spool" / key, box.decoys["abs"])


def _plant_user_download(box: Sandbox) -> None:
    """A registered user source (a local file) whose folder in the downloads is a link to a decoy."""
    source = box.root / "mine.csv"
    source.write_text("a,b\n1,2\n")
    done = cli(box, "data", "register", "mine", str(source))
    assert done.returncode == 0, done.stderr
    _link(box.home / "data/downloads/mine", box.decoys["abs"])


def _link(link: Path, target: Path) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=target.is_dir())


SETUPS = {
    "store": lambda box, seed: shutil.copy(seed, box.home / "results.duckdb"),
    "linked_dataset": lambda box, seed: _link(box.home / "data/cache/fanniemae_2016Q4", box.decoys["abs"]),
    "linked_cache": lambda box, seed: _link(box.home / "data/cache", box.decoys["abs"]),
    "linked_download": lambda box, seed: _link(box.home / "data/downloads/nyctaxi_2010-01", box.decoys["abs"]),
    "linked_file": lambda box, seed: _link(box.home / "data/cache/int64_frame/r10-s0/stray.csv", box.sentinel),
    "linked_env": lambda box, seed: _link(box.home / "envs/0123456789abcdef", box.decoys["abs"]),
    "linked_envs_root": lambda box, seed: _plant_env(box),
    "linked_make": lambda box, seed: _link(box.home / "data/cache/nyctaxi_2010-01", box.decoys["abs"]),
    "linked_data": lambda box, seed: _link(box.home / "data", box.decoys["abs"]),
    "linked_spool": lambda box, seed: _link(box.home / "spool", box.decoys["abs"]),
    "linked_profiles": lambda box, seed: (shutil.copy(seed, box.home / "results.duckdb"),
                                          _link(box.home / "profiles", box.decoys["abs"])),
    "linked_store_spool": lambda box, seed: _plant_store_spool(box),
    "linked_cache_file": lambda box, seed: _link(box.home / "data/cache/int64_frame/r10-s0/csv.csv", box.sentinel),
    "linked_registry": lambda box, seed: _link(box.home / "sources.json", box.sentinel),
    "linked_user_download": lambda box, seed: _plant_user_download(box),
    "store_and_bad_deadline": lambda box, seed: shutil.copy(seed, box.home / "results.duckdb"),
    "evil_registry": lambda box, seed: (box.home / "sources.json").write_text(json.dumps(
        {"sources": [{"name": "../../../decoy", "url": "http://127.0.0.1:9/decoy.csv"}]})),
}


def message_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_hostile_input(row: Row, sandbox: Sandbox, seeded_store: Path) -> None:
    if row.setup:
        SETUPS[row.setup](sandbox, seeded_store)
    before = sandbox.snapshot()
    argv = [sandbox.fill(a).encode().decode("unicode_escape") if "\\x" in a else sandbox.fill(a) for a in row.argv]
    extra = {"COLBENCH_NET_DEADLINE_S": "soon"} if row.setup == "store_and_bad_deadline" else None
    done = cli(sandbox, *argv, extra_env=extra)
    shown = f"exit {done.returncode}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    assert done.returncode == row.code, shown
    assert "Traceback" not in done.stdout + done.stderr, shown
    if row.code == 0:
        assert row.phrase in done.stdout, shown
    else:
        lines = message_lines(done.stderr)
        assert len(lines) == 1, shown
        assert row.phrase in lines[0], shown
    after = {p: p.read_bytes() for p in before if p.is_file()}
    assert after == before, f"decoy files changed or gone: {sorted(set(before) - set(after))}\n{shown}"
    added = set(sandbox.snapshot()) - set(before)
    assert row.writes or not added, f"files written into a decoy: {sorted(added)}\n{shown}"
    assert "HostileS3cret" not in done.stdout + done.stderr, shown
    assert not any(sandbox.work.iterdir()), f"files left in the working directory: {list(sandbox.work.iterdir())}"
    if row.gone:
        assert not os.path.lexists(sandbox.home / row.gone), shown


# ---------------------------------------------------------------------------------------------------- secrets

SECRETS = ("S3cretPassw0rd", "S3cretT0ken", "S3cretGitT0ken", "S3cretOldRec0rd")


def assert_no_secret(text: str | bytes, where: str) -> None:
    data = text if isinstance(text, bytes) else text.encode()
    for secret in SECRETS:
        assert secret.encode() not in data, f"{secret} in {where}:\n{data[:3000]!r}"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _dashboard_pages(box: Sandbox, run_ids: list[str]) -> dict[str, bytes]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("COLBENCH_STORE", "COLBENCH_DATA")}
    env["COLBENCH_HOME"] = str(box.home)
    server = subprocess.Popen([sys.executable, "-m", "colbench", "serve", "--port", str(port)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=box.work)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                _get(base + "/")
                break
            except OSError:
                assert server.poll() is None, server.communicate()
                assert time.monotonic() < deadline, "the dashboard did not start"
                time.sleep(0.3)
        pages = {}
        first, last = run_ids[0], run_ids[-1]
        paths = ["/", *(f"/runs/{r}" for r in run_ids), f"/compare?baseline={last}&contender={first}", "/history"]
        for path in paths:
            status, body = _get(base + path)
            assert status < 500, (path, status, body[:2000])
            pages[path] = body
        for run_id in run_ids:
            assert run_id.encode() in pages[f"/runs/{run_id}"]
        return pages
    finally:
        server.send_signal(signal.SIGTERM)
        out, err = server.communicate(timeout=60)
        assert_no_secret(out + err, "the dashboard's output")


def _seen_everywhere(box: Sandbox, run_ids: list[str], store_args: tuple[str, ...] = ()) -> None:
    """Every way a user can look at the runs: tables, run lists, exports, the report."""
    for run_id in run_ids:
        for fmt in ("table", "json", "csv", "markdown"):
            shown = cli(box, "show", run_id, "--format", fmt, *store_args)
            assert shown.returncode == 0, shown.stderr
            assert_no_secret(shown.stdout + shown.stderr, f"show --format {fmt}")
    for args in (("show", "--runs"), ("show", "--runs", "--format", "json"), ("store", "info")):
        shown = cli(box, *args, *store_args)
        assert shown.returncode == 0, shown.stderr
        assert_no_secret(shown.stdout + shown.stderr, " ".join(args))
    for fmt, name in (("jsonl", "x.jsonl"), ("csv", "x.csv"), ("parquet", "x.parquet"), ("conbench", "x.json")):
        out = box.work / name
        done = cli(box, "export", "--format", fmt, "-o", str(out), *store_args)
        assert done.returncode == 0, done.stderr
        assert_no_secret(out.read_bytes(), f"export --format {fmt}")
        if fmt == "parquet":  # compressed pages would hide a secret from a byte search: read the values
            import pyarrow.parquet as pq

            assert_no_secret(json.dumps(pq.read_table(out).to_pylist(), default=str), "export parquet values")
    report = box.work / "report"
    done = cli(box, "report", *run_ids, "--no-history", "-o", str(report), *store_args)
    assert done.returncode == 0, done.stderr
    files = [p for p in report.rglob("*") if p.is_file()]
    assert any(p.name == "index.html" for p in files)
    for path in files:
        assert_no_secret(path.read_bytes(), f"report file {path.name}")
    markdown = cli(box, "report", *run_ids, "--no-history", "--format", "markdown", "-o", "-", *store_args)
    assert markdown.returncode == 0, markdown.stderr
    assert_no_secret(markdown.stdout, "report --format markdown")


def _secret_run(box: Sandbox, *store_args: str) -> str:
    done = cli(box, *TINY_RUN, *store_args, "--run-name", "secrets",
               "--commit", "https://user:S3cretPassw0rd@example.invalid/repo.git",
               "--env", "a=@current COLBENCH_API_TOKEN=S3cretT0ken "
                        "GIT_URL=https://x-access-token:S3cretGitT0ken@github.com/org/repo")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_no_secret(done.stdout + done.stderr, "the run's output")
    shown = cli(box, "show", "--runs", "--format", "json", *store_args)
    return json.loads(shown.stdout)[0]["run_id"]


def _add_unredacted_copy(store: Path, run_id: str) -> str:
    """A copy of the run as an older colbench stored it: argv and the environment spec raw, secrets included."""
    import duckdb

    old_id = "20200101T000000-0ld0ld"
    with duckdb.connect(str(store)) as con:
        doc = json.loads(con.execute("SELECT doc FROM runs WHERE run_id = ?", [run_id]).fetchone()[0])
        doc["argv"] += ["--store", "postgresql://me:S3cretOldRec0rd@db.example/colbench"]
        doc.update(run_id=old_id, started_at="2020-01-01T00:00:00+00:00", name="old")
        con.execute("INSERT INTO runs (run_id, name, started_at, status, machine_id, doc) VALUES (?, ?, ?, ?, ?, ?)",
                    [old_id, "old", "2020-01-01 00:00:00", doc["status"], doc["machine_id"], json.dumps(doc)])
        columns = [c[0] for c in con.execute("DESCRIBE results").fetchall()]
        for row in con.execute("SELECT * FROM results WHERE run_id = ?", [run_id]).fetchall():
            values = dict(zip(columns, row, strict=True))
            result = json.loads(values["doc"])
            result["env"]["spec"] = "@current TOKEN=S3cretOldRec0rd"
            result.update(run_id=old_id, result_id="0ld" + result["result_id"])
            values.update(run_id=old_id, result_id=result["result_id"], doc=json.dumps(result))
            con.execute(f"INSERT INTO results ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                        list(values.values()))
    return old_id


def test_secrets_appear_nowhere(sandbox: Sandbox) -> None:
    """A run whose argv carries a password, a token and a git token: not in its record, its results, its output,
    any table, export, report or dashboard page; and a record an older colbench stored raw is masked on read."""
    import duckdb

    store = sandbox.home / "results.duckdb"
    run_id = _secret_run(sandbox)
    with duckdb.connect(str(store), read_only=True) as con:
        stored = con.execute("SELECT doc FROM runs").fetchall() + con.execute("SELECT doc FROM results").fetchall()
        argv = json.loads(con.execute("SELECT doc FROM runs").fetchone()[0])["argv"]
    assert_no_secret(json.dumps(stored), "the stored records")
    assert "https://user:***@example.invalid/repo.git" in argv  # masked, not dropped: the record says what was run

    old_id = _add_unredacted_copy(store, run_id)
    _seen_everywhere(sandbox, [run_id, old_id])
    pages = _dashboard_pages(sandbox, [run_id, old_id])
    for path, body in pages.items():
        assert_no_secret(body, f"dashboard page {path}")
    assert b"user:***@example.invalid" in pages[f"/runs/{run_id}"]

    # the variables' secrets were not stored, so a resume cannot restore them: it says so rather than run with ***
    done = cli(sandbox, "run", "--resume", run_id)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "COLBENCH_API_TOKEN" in done.stderr and "cannot be resumed" in done.stderr
    assert_no_secret(done.stdout + done.stderr, "the resume's output")


def test_unreachable_postgres_store_error_hides_the_password(sandbox: Sandbox) -> None:
    url = f"postgresql://me:S3cretPassw0rd@127.0.0.1:{_free_port()}/colbench"
    for args in (("show", "latest", "--store", url), (*TINY_RUN, "--store", url)):
        done = cli(sandbox, *args, extra_env={"COLBENCH_STORE_RETRY_S": "0"})
        assert done.returncode == 2, done.stdout + done.stderr
        assert len(message_lines(done.stderr)) == 1 and "Traceback" not in done.stderr, done.stderr
        assert "me:***@127.0.0.1" in done.stderr
        assert_no_secret(done.stdout + done.stderr, f"colbench {args[0]} with an unreachable store")


def test_conbench_url_with_password_is_refused_without_echoing_it(sandbox: Sandbox, seeded_store: Path) -> None:
    shutil.copy(seeded_store, sandbox.home / "results.duckdb")
    done = cli(sandbox, "publish", "--conbench", "http://me:S3cretPassw0rd@127.0.0.1:9")
    assert done.returncode == 2 and "CONBENCH_PASSWORD" in done.stderr, done.stderr
    assert_no_secret(done.stdout + done.stderr, "publish")
    done = cli(sandbox, "publish", "--conbench", f"http://127.0.0.1:{_free_port()}/?token=S3cretT0ken",
               "--github-repository", "https://github.com/org/repo",
               extra_env={"CONBENCH_EMAIL": "me@example.org", "CONBENCH_PASSWORD": "S3cretPassw0rd"})
    assert done.returncode == 2 and "cannot reach Conbench" in done.stderr, done.stderr
    assert_no_secret(done.stdout + done.stderr, "publish to a closed port")


@pytest.fixture(scope="module")
def pg_server():
    from tests.store.pgserver import PgServer, find_bindir

    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed: `uv sync --all-extras`")
    bindir = find_bindir()
    if bindir is None:
        if os.environ.get("COLBENCH_REQUIRE_ALL") == "1":
            pytest.fail("PostgreSQL is not installed (COLBENCH_REQUIRE_ALL=1)")
        pytest.skip("PostgreSQL is not installed")
    server = PgServer(bindir)
    try:
        server.start()
        server.wait_ready()
        yield server
    finally:
        server.destroy()


def test_postgres_store_url_password_is_never_recorded(sandbox: Sandbox, pg_server) -> None:
    import psycopg

    plain = pg_server.create_database("hostile_secrets")
    # the test server trusts local connections, so any password is accepted: the URL carries one like a real one
    url = plain.replace(f"{pg_server.user}@", f"{pg_server.user}:S3cretPassw0rd@")
    run_id = _secret_run(sandbox, "--store", url)
    with psycopg.connect(plain) as con:
        stored = con.execute("SELECT doc::text FROM runs").fetchall() + \
            con.execute("SELECT doc::text FROM results").fetchall()
        argv = json.loads(con.execute("SELECT doc::text FROM runs").fetchone()[0])["argv"]
    assert_no_secret(json.dumps(stored), "the PostgreSQL records")
    assert any(f"{pg_server.user}:***@" in a for a in argv), argv
    _seen_everywhere(sandbox, [run_id], ("--store", url))


# ------------------------------------------------------------------------------- round 2: behaviour, not a row

BAD_NUMBER_HOOK = '''
"""Test hook: the worker of a placebo case with duration 0 reports {value} as its first wall time."""
import importlib.abc, importlib.util, sys


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "colbench.workers.python.worker":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            run_case = module.run_case

            def hostile(spec_doc):
                doc = run_case(spec_doc)
                if spec_doc["params"].get("duration") == 0 and doc.get("samples", {{}}).get("wall_s"):
                    doc["samples"]["wall_s"][0] = {value}
                return doc
            module.run_case = hostile
        spec.loader.exec_module = exec_module
        return spec

sys.meta_path.insert(0, _Finder())
'''


@pytest.mark.slow
@pytest.mark.parametrize("value, why", [("float('nan')", "finite number"), ("float('inf')", "finite number"),
                                        ("-0.5", "finite number >= 0"), ("1e308", "longer than")])
def test_a_workers_bad_number_is_an_error_result_naming_it_and_the_run_goes_on(sandbox, value, why):
    hook = sandbox.root / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(BAD_NUMBER_HOOK.format(value=value))
    done = cli(sandbox, "run", "placebo", "--param", "duration=0,0.001", "--processes", "1", "--iterations", "2",
               "--warmup", "0", "--run-name", "hostile", extra_env={"PYTHONPATH": str(hook)})
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "✗" in done.stdout and "invalid" in done.stdout  # the live view says so, and goes on
    from colbench.store import open_store

    store = open_store(str(sandbox.home / "results.duckdb"), create=False, read_only=True)
    results = {r.params["duration"]: r for r in store.results()}
    (run,) = store.list_runs()
    assert run.status == "finished"  # the run went on to the second case
    bad, good = results[0.0], results[0.001]
    assert bad.status == "error" and bad.error is not None and bad.error["kind"] == "invalid"
    assert "samples.wall_s[0]" in bad.error["message"] and why in bad.error["message"]
    assert good.status == "ok"


@pytest.mark.slow
def test_git_runs_no_command_a_repository_names(sandbox):
    """`--repo DIR` reads the commit with git, and a repository is user input: its core.fsmonitor (run by `git
    status`) and hooks must not run."""
    repo = sandbox.root / "repo"
    marker = sandbox.root / "FSMONITOR_RAN"
    script = sandbox.root / "monitor.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\necho 0\n")
    script.chmod(0o755)
    for args in (["init", "-q", str(repo)], ["-C", str(repo), "-c", "user.email=a@b", "-c", "user.name=a", "commit",
                                               "-q", "--allow-empty", "-m", "x"],
                 ["-C", str(repo), "config", "core.fsmonitor", str(script)]):
        subprocess.run(["git", *args], check=True, capture_output=True)
    subprocess.run(["git", "-C", str(repo), "status"], capture_output=True)  # the probe works: plain git runs it
    assert marker.exists()
    marker.unlink()
    done = cli(sandbox, *TINY_RUN, "--repo", str(repo))
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "git ran the repository's fsmonitor command"


def test_names_from_a_shared_store_reach_no_terminal_raw(sandbox, seeded_store):
    """Another user's (or an older colbench's) run and machine names with escape sequences: `show --runs` and the
    run table print them escaped; the Markdown report shows HTML as text."""
    from colbench.store import open_store

    shutil.copy(seeded_store, sandbox.home / "results.duckdb")
    store = open_store(str(sandbox.home / "results.duckdb"))
    (run,) = store.list_runs()
    run.name = "\x1b]0;owned\x07\x1b[31m<img src=x onerror=alert(1)>"
    run.machine["name"] = "box\x1b[2J"
    store.update_run(run)
    store.close()
    for args in (("show", "--runs"), ("show", "latest")):
        done = cli(sandbox, *args)
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout and "\x07" not in done.stdout, repr(done.stdout[:500])
        assert "\\x1b" in done.stdout
    done = cli(sandbox, "report", "latest", "--format", "markdown", "--no-history", "-o", str(sandbox.root / "md"))
    assert done.returncode == 0, done.stderr
    text = "".join(p.read_text() for p in (sandbox.root / "md").glob("*.md"))
    assert "&lt;img src=x" in text and "<img" not in text and "\x1b" not in text


def _store_state(path: Path) -> tuple[bytes, int, list[str]]:
    return path.read_bytes(), path.stat().st_mtime_ns, sorted(p.name for p in path.parent.iterdir())


@pytest.mark.slow
def test_reading_commands_never_write_the_store(sandbox, seeded_store):
    shutil.copy(seeded_store, sandbox.home / "results.duckdb")
    store = sandbox.home / "results.duckdb"
    done = cli(sandbox, *TINY_RUN, "--run-name", "second")
    assert done.returncode == 0, done.stderr
    before = _store_state(store)
    out = sandbox.root / "out"
    out.mkdir()
    first = json.loads(cli(sandbox, "show", "--runs", "--format", "json").stdout)[-1]["run_id"]
    for args in (("show",), ("show", "--runs"), ("show", "latest", "--format", "json"), ("compare", first, "second"),
                 ("history", "placebo"), ("claims", "latest"),
                 ("export", "-o", str(out / "x.parquet")), ("report", "latest", "--no-history", "-o", str(out / "r")),
                 ("store", "info")):
        done = cli(sandbox, *args)
        assert done.returncode in (0, 1, 2, 3) and "Traceback" not in done.stderr, (args, done.stderr)
        assert _store_state(store) == before, f"`colbench {' '.join(args)}` changed the store"


def _tmpfs(path: Path, size: str = "8m") -> bool:
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path):
    """An 8 MiB file system (a tmpfs: needs root); skipped where it cannot be mounted."""
    disk = tmp_path / "disk"
    if not _tmpfs(disk):
        pytest.skip("cannot mount a tmpfs here (needs root): the full-disk tests need one")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


@pytest.mark.slow
def test_a_full_disk_is_one_line_for_data_make(sandbox, small_disk):
    env = {"COLBENCH_HOME": str(small_disk / "home")}
    done = cli(sandbox, "data", "make", "fanniemae_2016Q4", "--rows", "200000", "--format", "csv", extra_env=env)
    lines = message_lines(done.stderr)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1 and "No space left on device" in lines[0], done.stderr


@pytest.mark.slow
def test_a_run_that_fills_the_disk_stops_says_where_and_resumes(sandbox, small_disk):
    """The disk fills while the run goes (a file written beside the store once results arrive): the run stops with
    one line saying after how many executions, its record says where, and --resume finishes it once there is room."""
    home = small_disk / "home"
    env = {**os.environ, "COLBENCH_HOME": str(home), "TMPDIR": str(sandbox.root)}
    runner = subprocess.Popen([sys.executable, "-m", "colbench", "run", "placebo", "--param", "duration=0.2",
                               "--processes", "30", "--iterations", "1", "--warmup", "0", "--run-name", "full"],
                              env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    store = home / "results.duckdb"
    deadline = time.monotonic() + 120
    while not store.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(3)  # a few results in (30 executions take ~10 s): then the disk fills
    filler = small_disk / "filler"
    with open(filler, "wb", buffering=0) as handle:  # to the last byte: small files must not fit either
        for chunk in (1 << 16, 4096, 1):
            with contextlib.suppress(OSError):
                while True:
                    handle.write(b"\0" * chunk)
    stdout, stderr = runner.communicate(timeout=300)
    lines = message_lines(stderr)
    assert runner.returncode == 2 and "Traceback" not in stderr, (stdout, stderr, filler.stat().st_size)
    assert "stopped after" in lines[-1] and "of 30 executions" in lines[-1] and "--resume" in lines[-1], stderr
    filler.unlink()
    resumed = cli(sandbox, "run", "--resume", "full", extra_env={"COLBENCH_HOME": str(home)})
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    from colbench.store import open_store

    done = open_store(str(store), create=False, read_only=True)
    (run,) = done.list_runs()
    assert run.status == "finished" and run.resumes and run.stopped is None and "stopped" not in run.to_json()
    assert len(done.results()) == 30


@pytest.mark.slow
def test_a_worker_stopped_and_resumed_is_noted(sandbox):
    from tests.runner.helpers import kill_leftovers, start_run, wait_for_worker

    runner = start_run(sandbox.home, sandbox.root / "tmp", "placebo", "--param", "duration=1.5", "--processes", "1",
                       "--iterations", "1", "--warmup", "0", "--run-name", "paused")
    worker = None
    try:
        worker = wait_for_worker(runner)
        time.sleep(0.3)
        worker.send_signal(signal.SIGSTOP)
        time.sleep(0.5)
        worker.send_signal(signal.SIGCONT)
        _, stderr = runner.communicate(timeout=120)
    finally:
        kill_leftovers(runner, worker)
    assert runner.returncode == 0, stderr
    from colbench.store import open_store

    store = open_store(str(sandbox.home / "results.duckdb"), create=False, read_only=True)
    (result,) = store.results()
    assert result.status == "ok" and result.process["stopped"] == 1
    assert any("stopped 1 time(s)" in w for w in result.warnings), result.warnings


def test_an_old_spool_beside_the_store_is_read_and_left_alone(sandbox, seeded_store, tmp_path):
    """Results an older colbench left in `<store>.spool/` (beside a store file outside the home) are taken into
    the store, and the folder is not deleted: colbench deletes only in its own tree."""
    from colbench.store import open_store
    from tests.store.helpers import synthetic_result

    where = sandbox.decoys["next"] / "results.duckdb"
    shutil.copy(seeded_store, where)
    store = open_store(str(where), create=False, read_only=True)
    run_id = store.list_runs()[0].run_id
    store.close()
    old = where.with_name(where.name + ".spool") / "results"
    old.mkdir(parents=True)
    doc = synthetic_result(run_id, 7).to_json()
    (old / f"{doc['result_id']}.json").write_text(json.dumps(doc))
    done = cli(sandbox, "store", "sync", "--store", str(where))
    assert done.returncode == 0, done.stderr
    assert (old / f"{doc['result_id']}.json").exists()
    assert any(r.result_id == doc["result_id"]
               for r in open_store(str(where), create=False, read_only=True).results())


# ------------------------------------------------------------------------------- round 3: behaviour, not a row

def test_publish_against_a_trickling_server_ends_within_its_deadline(sandbox, seeded_store):
    """The issue's probe: a server that announces a body and sends a byte at a time. `publish` gives up at its
    deadline with one line and exit 2; the store is as it was."""
    from tests.netfaults import fault_server

    shutil.copy(seeded_store, sandbox.home / "results.duckdb")
    before = (sandbox.home / "results.duckdb").read_bytes()
    login = {"CONBENCH_EMAIL": "me@example.org", "CONBENCH_PASSWORD": "S3cretPassw0rd"}
    with fault_server() as server:
        for args, env in (((), {"COLBENCH_NET_DEADLINE_S": "2"}), (("--net-deadline", "2"), {})):
            started = time.monotonic()
            done = cli(sandbox, "publish", "--conbench", f"{server.url}/slow-body", *args, extra_env={**login, **env})
            took = time.monotonic() - started
            lines = message_lines(done.stderr)
            assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
            assert "in 2 s, the deadline of a network call" in lines[0], lines[0]
            assert took < 2 + 15, f"publish took {took:.0f} s against a 2 s deadline"  # 15 s: starting colbench
            assert_no_secret(done.stdout + done.stderr, "publish against a trickling server")
        for behaviour, phrase in (("error500", "failed with a server error at the login"),
                                  ("error401", "refused the login of me@example.org (HTTP 401"),
                                  ("redirect", "another server")):
            done = cli(sandbox, "publish", "--conbench", f"{server.url}/{behaviour}", "--net-deadline", "2",
                       extra_env=login)
            lines = message_lines(done.stderr)
            assert done.returncode == 2 and len(lines) == 1 and phrase in lines[0], done.stderr
    assert (sandbox.home / "results.duckdb").read_bytes() == before


def test_a_password_in_a_git_url_reaches_no_file(sandbox, tmp_path):
    """`bisect --git http://me:PASSWORD@host/repo`: the clone (under $COLBENCH_HOME/git/) and an environment built
    from one of its commits (envs/<key>/requirements.lock) get the login from the environment, never a file: no
    file in the home holds the password, yet the server saw it (so the login really went through)."""
    from tests.githttp import git_http_server

    served = tmp_path / "served"
    work = tmp_path / "pkg"
    (work / "probepkg").mkdir(parents=True)
    (work / "pyproject.toml").write_text('[project]\nname = "probepkg"\nversion = "0.1.0"\n\n[build-system]\n'
                                         'requires = ["hatchling"]\nbuild-backend = "hatchling.build"\n')
    (work / "probepkg" / "__init__.py").write_text("X = 1\n")
    git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    for message in ("one", "two"):
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", message], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "package"], check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(served / "probe.git")], check=True)
    script = (
        "import sys\n"
        "from colbench.runtimes.builds import git_builds\n"
        "from colbench.runtimes.python import EnvSpec, colbench_project, ensure_environment\n"
        "builds = git_builds(sys.argv[1], 'main~2', 'main', 'probepkg')\n"
        "env = ensure_environment(EnvSpec('p', (builds[-1].requirement,)), colbench_project())\n"
        "print(env.lock_file.read_text())\n")
    with git_http_server(served, "me", "S3cretPassw0rd") as server:
        url = server.url("probe.git", "me:S3cretPassw0rd")
        env = {k: v for k, v in os.environ.items() if k not in ("COLBENCH_STORE", "COLBENCH_DATA")}
        done = subprocess.run([sys.executable, "-c", script, url], capture_output=True, text=True, timeout=600,
                              env={**env, "COLBENCH_HOME": str(sandbox.home)}, cwd=sandbox.work)
        assert done.returncode == 0, done.stderr[-3000:]
        assert f"probepkg @ git+http://127.0.0.1:{server.port}/probe.git@" in done.stdout
        assert "me:S3cretPassw0rd" in server.logins  # git (and uv's git) logged in with it
        # a wrong password: git's reason, one line, and nothing written with it either
        done = cli(sandbox, "bisect", "placebo", "--param", "duration=0", "--git",
                   server.url("probe.git", "me:wr0ngPassw0rd"), "--package", "probepkg", "--good", "main~1", "--bad",
                   "main")
        assert done.returncode == 2 and len(message_lines(done.stderr)) == 1, done.stderr
        assert "fatal: Authentication failed" in done.stderr and "wr0ng" not in done.stderr, done.stderr
    held = [p for p in sandbox.home.rglob("*") if p.is_file() and not p.is_symlink()
            and (b"S3cretPassw0rd" in p.read_bytes() or b"wr0ngPassw0rd" in p.read_bytes())]
    assert not held, f"a password is in {held}"
    (config,) = sandbox.home.glob("git/*/config")
    assert f"url = http://127.0.0.1:{server.port}/probe.git" in config.read_text()
    assert list(sandbox.home.glob("envs/*/requirements.lock"))


def test_control_characters_reach_no_html_page_raw(sandbox, seeded_store):
    """A run name and a machine name with ESC, BEL and NUL (from a shared store): the HTML report and the dashboard
    show U+FFFD in their place, as the SVG flame graphs do."""
    from colbench.store import open_store

    shutil.copy(seeded_store, sandbox.home / "results.duckdb")
    store = open_store(str(sandbox.home / "results.duckdb"))
    (run,) = store.list_runs()
    run.name = "name\x1b]0;owned\x07\x00\x1b[31m"
    run.machine["name"] = "box\x1b[2J\x7f\x9b"
    store.update_run(run)
    store.close()
    out = sandbox.root / "report"
    done = cli(sandbox, "report", "latest", "--no-history", "-o", str(out))
    assert done.returncode == 0, done.stderr
    page = (out / "index.html").read_bytes()
    raw = [c for c in (b"\x1b", b"\x07", b"\x00", b"\x7f", "\x9b".encode()) if c in page]
    assert not raw and "name\ufffd]0;owned".encode() in page, raw
    for path, body in _dashboard_pages(sandbox, [run.run_id]).items():
        assert not any(c in body for c in (b"\x1b", b"\x07", b"\x00")), path
