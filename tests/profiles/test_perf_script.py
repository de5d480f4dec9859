"""Reading `perf script` samples (explain --profiler perf): stacks root first, costs per call, inlined frames in
their caller's library, unknown addresses per library, and the sampling noise of a change."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest

from colbench.profiles.callgrind import Frame, ProfileError
from colbench.profiles.diff import diff_profiles
from colbench.profiles.perf_script import parse_samples, perf_view, sampling_error, total_sampling_error

# the shape `perf script --fields comm,tid,event,period,ip,sym,dso` prints (perf 6.1), leaf first
SAMPLES = """\
python 4711     500000 cpu-clock:
\t          1c70cd crc32_z (/usr/lib/x86_64-linux-gnu/libz.so.1.2.13)
\t          158b67 _PyObject_VectorcallTstate (inlined)
\t          158b67 PyObject_CallOneArg (/usr/lib/libpython3.11.so.1.0)
\t           fc226 _PyEval_EvalFrameDefault (/usr/lib/libpython3.11.so.1.0)

python 4711     500000 cpu-clock:
\t          2a0c20 arrow::Status::~Status() (/venv/pyarrow/libarrow.so.1900)
\t          3a0c20 [unknown] (/venv/_duckdb.cpython-311-x86_64-linux-gnu.so)
\t          3a0c40 [unknown] (/venv/_duckdb.cpython-311-x86_64-linux-gnu.so)
\t           fc226 _PyEval_EvalFrameDefault (/usr/lib/libpython3.11.so.1.0)

python 4712     500000 cpu-clock:
\tffffffff81abd690 clear_page_erms ([kernel.kallsyms])
\t           fc226 _PyEval_EvalFrameDefault (/usr/lib/libpython3.11.so.1.0)
"""


def test_stacks_are_root_first_with_libraries_and_inlined_frames_in_their_callers_library():
    folded, unit, counts = parse_samples(SAMPLES.split("\n"))
    assert unit == "ns" and counts.samples == 3 and counts.period == 500000
    eval_frame = Frame("_PyEval_EvalFrameDefault", "libpython3.11.so")
    crc = (eval_frame, Frame("PyObject_CallOneArg", "libpython3.11.so"),
           Frame("_PyObject_VectorcallTstate", "libpython3.11.so"), Frame("crc32_z", "libz.so"))
    assert folded[crc] == 500000
    # two addresses of one stripped library in a row are one frame, named by its library
    duck = (eval_frame, Frame("[no symbols] _duckdb.cpython-311-x86_64-linux-gnu.so",
                              "_duckdb.cpython-311-x86_64-linux-gnu.so"), Frame("arrow::Status::~Status()",
                                                                                 "libarrow.so"))
    assert folded[duck] == 500000
    assert folded[(eval_frame, Frame("clear_page_erms", "[kernel.kallsyms]"))] == 500000
    assert sum(folded.values()) == 1_500_000


def test_a_view_is_the_cost_of_one_call_and_noise_scales_with_it(tmp_path: Path):
    path = tmp_path / "profile.perf.gz"
    path.write_bytes(gzip.compress(SAMPLES.encode()))
    view, counts = perf_view(path, "a", calls=10)
    assert view.unit == "ns" and view.total == 150_000 and counts.period == 50_000
    crc = Frame("crc32_z", "libz.so")
    # Poisson: one sample of 50 µs a call on one side, none on the other
    assert sampling_error(counts, counts, crc) == pytest.approx(math.sqrt(2) * 50_000)
    assert total_sampling_error(counts, counts) == pytest.approx(math.sqrt(6) * 50_000)


def test_a_sampled_change_within_two_standard_errors_is_marked(tmp_path: Path):
    base = tmp_path / "a.perf.gz"
    base.write_bytes(gzip.compress(SAMPLES.encode()))
    more = tmp_path / "b.perf.gz"  # the crc32 sample three times over: +2 samples of it
    crc_sample = SAMPLES.split("\n\n")[0]
    more.write_bytes(gzip.compress((SAMPLES + "\n" + crc_sample + "\n\n" + crc_sample + "\n").encode()))
    (view_a, counts_a), (view_b, counts_b) = perf_view(base, "a"), perf_view(more, "b")
    diff = diff_profiles(view_a, view_b, noise=lambda f: sampling_error(counts_a, counts_b, f),
                         total_noise=total_sampling_error(counts_a, counts_b))
    (top, *_) = diff.changes
    assert top.function == "crc32_z" and top.delta_self == 1_000_000 and top.share == pytest.approx(1.0)
    assert top.within_noise  # 2 samples more against sqrt(1 + 3) = 2 samples of noise
    assert diff.unit == "ns" and diff.total_within_noise


def test_no_samples_is_a_clear_error():
    with pytest.raises(ProfileError, match="no samples"):
        parse_samples(["", "   "])


# --- Python functions (a 3.12+ worker's trampolines) -------------------------------------------------------------

PYTHON_SAMPLES = """\
python3.12 4711     500000 cpu-clock:
\t          1cfe10 _PyObject_Malloc (/v/lib/libpython3.12.so.1.0)
\t          1159a8 _PyEval_EvalFrameDefault (/v/lib/libpython3.12.so.1.0)
\t    7f64c40ba7cc [unknown] (/tmp/perf-4711.map)

python3.12 4711     500000 cpu-clock:
\t          1123df _PyEval_EvalFrameDefault (/v/lib/libpython3.12.so.1.0)
\t    7f64c40ba7cc py::Planted.checksum:/v/lib/python3.12/site-packages/planted/__init__.py (/tmp/perf-4711.map)

python3.12 4711     500000 cpu-clock:
\t          2a0c20 arrow::Status::~Status() (/v/pyarrow/libarrow.so.1900)
\t          1123df _PyEval_EvalFrameDefault (/v/lib/libpython3.12.so.1.0)
\t    7f64c40ba000 [unknown] (/tmp/perf-4711.map)
"""

KEPT_MAP = "7f64c40ba7c7 b py::Planted.checksum:/v/lib/python3.12/site-packages/planted/__init__.py\n"


def test_python_frames_are_named_by_perf_or_by_the_kept_map_and_take_their_bytecodes_cost(tmp_path: Path):
    kept = tmp_path / "perf.map"
    kept.write_text(KEPT_MAP)
    (tmp_path / "perf.map.lines.json").write_text(
        '{"py::Planted.checksum:/v/lib/python3.12/site-packages/planted/__init__.py": [7]}')
    path = tmp_path / "profile.perf.gz"
    path.write_bytes(gzip.compress(PYTHON_SAMPLES.encode()))
    view, counts = perf_view(path, "b", perf_map=kept)
    planted = Frame("py::Planted.checksum (planted/__init__.py)", "python")
    # named by the kept map (by address) and by perf (by name) alike; the interpreter frames that run its
    # bytecode are its own cost, a native function it calls stays a frame of its own
    assert view.folded[(planted,)] == 1_000_000
    assert view.python_named and view.python_lines == {planted.name: (7,)}
    assert counts.by_frame[planted] == 2
    # an address the map does not cover is code without symbols, and the interpreter below it is not folded
    unknown = Frame("[no symbols] perf-4711.map", "perf-4711.map")
    assert view.folded[(unknown, Frame("_PyEval_EvalFrameDefault", "libpython3.12.so"),
                        Frame("arrow::Status::~Status()", "libarrow.so"))] == 500_000
    # without the kept map, only the frame perf named itself is a Python function
    bare, _ = perf_view(path, "b")
    assert bare.folded[(planted,)] == 500_000 and bare.python_lines == {}
