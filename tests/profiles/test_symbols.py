"""Naming a profile's frames: Cython demangling, libraries across releases, Python functions through CPython's perf
map, and which ELF files have symbols (real files: one compiled here, stripped here, and the system's own)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from colbench.profiles.callgrind import parse_lines
from colbench.profiles.symbols import (
    PYTHON_OBJECT,
    PerfMap,
    demangle_cython,
    frame_name,
    is_address,
    is_interpreter,
    object_symbols,
    python_function,
    short_object,
    with_lines,
)
from colbench.profiles.view import NO_SYMBOLS, fold_interpreter, library_key, view_of

# --- Cython ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mangled", "name"), [
    ("__pyx_pw_7pyarrow_8_dataset_7Scanner_13to_table", "pyarrow._dataset.Scanner.to_table"),
    ("__pyx_pf_7pyarrow_3lib_5Table_64to_pandas", "pyarrow.lib.Table.to_pandas"),
    ("__pyx_pw_7pyarrow_3lib_5Array_122__or__", "pyarrow.lib.Array.__or__"),
    ("__pyx_pw_7pyarrow_8_parquet_1_stringify_path", "pyarrow._parquet._stringify_path"),
    ("__pyx_pw_7pyarrow_3lib_69unregister_extension_type", "pyarrow.lib.unregister_extension_type"),
    # cdef functions and methods have no counter before their name
    ("__pyx_f_7pyarrow_3lib_check_status", "pyarrow.lib.check_status"),
    ("__pyx_f_7pyarrow_3lib__ensure_compression", "pyarrow.lib._ensure_compression"),
    ("__pyx_f_7pyarrow_3lib_8DataType_init", "pyarrow.lib.DataType.init"),
    # a counter whose name has `_` where a part of that length would end: "2to_numpy" is not a part "to"
    ("__pyx_pw_7pyarrow_3lib_5Array_2to_numpy", "pyarrow.lib.Array.to_numpy"),
    ("__pyx_pf_7pyarrow_8_compute_8Function_4_doc___get__", "pyarrow._compute.Function._doc___get__"),
    # as callgrind shows them: C++-demangled, with the parameter list and clone suffix kept after the name
    ("__pyx_pw_7pyarrow_3lib_5Table_49add_column(_object*, _object* const*, long, _object*) [clone .lto_priv.0]",
     "pyarrow.lib.Table.add_column(_object*, _object* const*, long, _object*) [clone .lto_priv.0]"),
    ("__pyx_f_7pyarrow_3lib_get_reader(_object*, bool, std::shared_ptr<arrow::io::RandomAccessFile>*)",
     "pyarrow.lib.get_reader(_object*, bool, std::shared_ptr<arrow::io::RandomAccessFile>*)"),
])
def test_cython_names_are_demangled(mangled: str, name: str):
    assert demangle_cython(mangled) == name


@pytest.mark.parametrize("other", ["arrow::ipc::ReadRecordBatch", "memcpy", "__pyx_pw_x", "__pyx_pw_7pyarrow",
                                   "_PyEval_EvalFrameDefault", "0x0000000000401000", "__pyx_module_exec_lib"])
def test_names_that_are_not_cython_functions_are_left_alone(other: str):
    assert demangle_cython(other) is None


def test_the_real_pyarrow_wheels_cython_symbols_demangle():
    """Every Python-visible and cdef function symbol of pyarrow's own `lib` module (its wheel keeps .symtab)."""
    pyarrow = pytest.importorskip("pyarrow")
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is needed to list the symbols")
    lib = next(Path(pyarrow.__file__).parent.glob("lib.cpython-*.so"), None)
    if lib is None:
        pytest.skip("pyarrow has no lib module file here")
    listed = subprocess.run([nm, "-C", "--defined-only", str(lib)], capture_output=True, text=True, check=True)
    symbols = [line.split(" ", 2)[2] for line in listed.stdout.splitlines()
               if " __pyx_pw_7pyarrow_3lib_" in line or " __pyx_f_7pyarrow_3lib_" in line]
    assert len(symbols) > 200
    named = {s: demangle_cython(s) for s in symbols}
    assert all(n is not None and n.startswith("pyarrow.lib.") for n in named.values()), \
        [s for s, n in named.items() if n is None][:5]
    # no part of a name is a length or a counter left over
    assert not any(part[:1].isdigit() for n in named.values() if n for part in n.split("(", 1)[0].split("."))


# --- libraries and the interpreter --------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "key"), [
    ("/venv/lib/python3.11/site-packages/pyarrow/libarrow.so.2600", "libarrow.so"),
    ("/venv/lib/python3.11/site-packages/pyarrow/libparquet.so.1900.1.0", "libparquet.so"),
    ("/usr/lib/x86_64-linux-gnu/libz.so.1.2.13", "libz.so"),
    ("/usr/lib/x86_64-linux-gnu/libc.so.6", "libc.so"),
    ("/opt/lib/libpython3.11.so.1.0", "libpython3.11.so"),
    ("/venv/pyarrow/lib.cpython-311-x86_64-linux-gnu.so", "lib.cpython-311-x86_64-linux-gnu.so"),
    ("/usr/bin/python3.11", "python3.11"),
    ("???", "?"),
    ("", "?"),
])
def test_library_key_is_the_library_without_its_version(path: str, key: str):
    assert library_key(path) == key


def test_short_object_is_the_file_name():
    assert short_object("/a/b/libarrow.so.2600") == "libarrow.so.2600"
    assert short_object("???") == "?"


@pytest.mark.parametrize(("obj", "interpreter"), [
    ("/usr/bin/python3.11", True), ("/opt/lib/libpython3.12.so.1.0", True), ("python3.12", True),
    ("libpython3.11.so", True), ("/venv/bin/python", True),
    ("/venv/pyarrow/libarrow_python.so.2600", False), ("/venv/pyarrow/lib.cpython-311-x86_64-linux-gnu.so", False),
    ("/usr/lib/x86_64-linux-gnu/libc.so.6", False), ("???", False),
])
def test_is_interpreter(obj: str, interpreter: bool):
    assert is_interpreter(obj) is interpreter


def test_is_address():
    assert is_address("0x0000000000002510") and is_address("0x7f00AB")
    assert not is_address("0x") and not is_address("main") and not is_address("0x12 main")


# --- CPython's perf map ------------------------------------------------------------------------------------------

PERF_MAP = """\
7f0000001000 40 py::read_table:/venv/lib/python3.12/site-packages/pyarrow/parquet/core.py
7f0000001040 40 py::<module>:/work/script.py
7f0000002000 10 py::Table.to_pandas:/venv/lib/python3.12/site-packages/pyarrow/pandas_compat.py
7f0000003000 20 some_jit_stub
not a line
zz 10 py::bad_address:/x.py
"""


@pytest.fixture
def perf_map(tmp_path: Path) -> PerfMap:
    path = tmp_path / "perf-1234.map"
    path.write_text(PERF_MAP)
    return PerfMap.read(path)


def test_perf_map_names_addresses_inside_each_range_and_none_outside(perf_map: PerfMap):
    assert len(perf_map) == 4  # the malformed lines are skipped
    assert perf_map.name_of(0x7F0000001000).startswith("py::read_table:")
    assert perf_map.name_of(0x7F000000103F).startswith("py::read_table:")
    assert perf_map.name_of(0x7F0000001040) == "py::<module>:/work/script.py"  # the next range starts here
    assert perf_map.name_of(0x7F0000001080) is None  # past its end
    assert perf_map.name_of(0x7F0000000FFF) is None  # before the first
    assert perf_map.name_of(0x7F0000002010) is None
    assert perf_map.name_of(0) is None


def test_a_missing_perf_map_is_empty(tmp_path: Path):
    assert len(PerfMap.read(tmp_path / "none.map")) == 0 and len(PerfMap.read(None)) == 0
    assert PerfMap.read(None).name_of(0x1000) is None


def test_frame_name_names_a_python_function_from_the_perf_map(perf_map: PerfMap):
    assert frame_name("0x7f0000001010", "???", perf_map) == ("py::read_table (pyarrow/parquet/core.py)",
                                                             PYTHON_OBJECT)
    assert frame_name("0x7f0000001044", "???", perf_map) == ("py::<module> (script.py)", PYTHON_OBJECT)
    # an entry that is not a Python function's, or an address no entry covers, stays an address
    assert frame_name("0x7f0000003004", "???", perf_map) == ("0x7f0000003004", "?")
    assert frame_name("0x0000000000002510", "/usr/lib/libffi.so.8", perf_map) == ("0x0000000000002510",
                                                                                 "libffi.so.8")
    # native names are not looked up in the map; Cython names are demangled
    assert frame_name("memcpy", "/usr/lib/x86_64-linux-gnu/libc.so.6", perf_map) == ("memcpy", "libc.so.6")
    assert frame_name("__pyx_f_7pyarrow_3lib_check_status", "/v/pyarrow/lib.cpython-312.so", perf_map) == \
        ("pyarrow.lib.check_status", "lib.cpython-312.so")


def test_python_function_shows_a_package_path_or_the_file_name():
    assert python_function("py::read_table:/v/lib/python3.12/site-packages/pyarrow/parquet/core.py") == \
        "read_table (pyarrow/parquet/core.py)"
    assert python_function("py::main:/home/me/bench.py") == "main (bench.py)"
    assert python_function("py::f") == "f"
    # the module's path, whatever the environment's folder and Python: one frame on 3.12 and 3.13
    assert python_function("py::Planted.checksum:/e/1/lib/python3.12/site-packages/planted/__init__.py") == \
        python_function("py::Planted.checksum:/e/2/lib/python3.13/site-packages/planted/__init__.py") == \
        "Planted.checksum (planted/__init__.py)"
    assert python_function("py::JSONDecoder.decode:/opt/py/lib/python3.13/json/decoder.py") == \
        "JSONDecoder.decode (json/decoder.py)"
    assert python_function("py::f:/usr/lib/python3/dist-packages/pandas/core/frame.py") == \
        "f (pandas/core/frame.py)"
    assert python_function("py::ABCMeta.__new__:<frozen abc>") == "ABCMeta.__new__ (<frozen abc>)"


def test_the_worker_s_first_lines_name_lines_beside_the_frames(tmp_path: Path):
    kept = tmp_path / "perf.map"
    kept.write_text("7f0000001000 40 py::read_table:/v/lib/python3.12/site-packages/pyarrow/parquet/core.py\n"
                    "7f0000002000 40 py::<lambda>:/work/bench.py\n7f0000003000 40 py::gone:/work/bench.py\n")
    (tmp_path / "perf.map.lines.json").write_text(json.dumps({
        "py::read_table:/v/lib/python3.12/site-packages/pyarrow/parquet/core.py": [1790],
        "py::<lambda>:/work/bench.py": [12, 40]}))
    names = PerfMap.read(kept)
    assert names.python_frame(0x7F0000001004) == ("py::read_table (pyarrow/parquet/core.py)", (1790,))
    assert names.python_frame(0x7F0000003004) == ("py::gone (bench.py)", ())  # its code object was gone
    assert names.lines_by_frame() == {"py::read_table (pyarrow/parquet/core.py)": (1790,),
                                      "py::<lambda> (bench.py)": (12, 40)}
    # a damaged lines file names no line, and the map still names the functions
    (tmp_path / "perf.map.lines.json").write_text("{not json")
    assert PerfMap.read(kept).python_frame(0x7F0000001004) == ("py::read_table (pyarrow/parquet/core.py)", ())


def test_lines_are_shown_beside_a_python_function_and_both_sides_where_they_differ():
    name = "py::read_table (pyarrow/parquet/core.py)"
    assert with_lines(name, (1790,), (1790,)) == "py::read_table (pyarrow/parquet/core.py:1790)"
    assert with_lines(name, (1790,), (1802,)) == "py::read_table (pyarrow/parquet/core.py:1790→1802)"
    assert with_lines(name, (), (1802,)) == "py::read_table (pyarrow/parquet/core.py:1802)"
    assert with_lines(name, (12, 40)) == "py::read_table (pyarrow/parquet/core.py:12,40)"
    assert with_lines(name, (), ()) == name
    assert with_lines("memcpy", (3,), (3,)) == "memcpy"


# --- ELF files: symbols, exported only, unknown ----------------------------------------------------------------


def _need(*tools: str) -> list[str]:
    found = [shutil.which(t) for t in tools]
    if None in found:
        pytest.skip(f"{', '.join(t for t, p in zip(tools, found, strict=True) if p is None)} not on PATH")
    return [str(p) for p in found]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> dict[str, Path]:
    """A small shared library built here with symbols, and copies stripped of debug info and of every symbol."""
    cc, strip = _need("cc", "strip")
    folder = tmp_path_factory.mktemp("elf")
    source = folder / "lib.c"
    source.write_text("static int helper(int x) { return x * 3; }\nint exported(int x) { return helper(x) + 1; }\n")
    full = folder / "libfull.so.1"
    subprocess.run([cc, "-g", "-O1", "-shared", "-fPIC", "-Wl,--build-id", "-o", str(full), str(source)],
                   check=True, capture_output=True)
    no_debug, stripped = folder / "libnodebug.so.1", folder / "libstripped.so.1"
    shutil.copy(full, no_debug)
    shutil.copy(full, stripped)
    subprocess.run([strip, "--strip-debug", str(no_debug)], check=True, capture_output=True)
    subprocess.run([strip, "--strip-all", str(stripped)], check=True, capture_output=True)
    return {"full": full, "no_debug": no_debug, "stripped": stripped}


def _sections(path: Path) -> str:
    (readelf,) = _need("readelf")
    return subprocess.run([readelf, "-S", "-W", str(path)], capture_output=True, text=True, check=True).stdout


def _debug_file(path: Path) -> Path | None:
    (readelf,) = _need("readelf")
    notes = subprocess.run([readelf, "-n", str(path)], capture_output=True, text=True).stdout
    build_id = next((line.split()[-1] for line in notes.splitlines() if "Build ID" in line), None)
    return Path("/usr/lib/debug/.build-id") / build_id[:2] / f"{build_id[2:]}.debug" if build_id else None


def test_object_symbols_of_a_library_built_here_then_stripped(compiled: dict[str, Path]):
    assert ".symtab" in _sections(compiled["full"]) and ".debug_info" in _sections(compiled["full"])
    assert object_symbols(str(compiled["full"])) == "symbols"
    assert ".symtab" in _sections(compiled["no_debug"]) and ".debug_info" not in _sections(compiled["no_debug"])
    assert object_symbols(str(compiled["no_debug"])) == "symbols"  # a symbol table is enough to name functions
    assert ".symtab" not in _sections(compiled["stripped"])
    assert object_symbols(str(compiled["stripped"])) == "exported only"


def test_object_symbols_of_a_stripped_system_library():
    candidates = [Path("/usr/lib/x86_64-linux-gnu") / name for name in ("libz.so.1", "libffi.so.8", "libbz2.so.1.0",
                                                                        "liblzma.so.5", "libexpat.so.1")]
    for path in candidates:
        if path.exists() and ".symtab" not in _sections(path) and ".debug_info" not in _sections(path):
            debug = _debug_file(path)
            assert object_symbols(str(path)) == ("symbols" if debug and debug.exists() else "exported only"), path
            return
    pytest.skip("no stripped system library found among " + ", ".join(p.name for p in candidates))


def test_object_symbols_finds_a_debian_dbgsym_file_by_build_id():
    libc = Path("/usr/lib/x86_64-linux-gnu/libc.so.6")
    if not libc.exists():
        pytest.skip("no glibc at the Debian path")
    debug = _debug_file(libc)
    if ".symtab" in _sections(libc) or debug is None or not debug.exists():
        pytest.skip("glibc's detached debug symbols (libc6-dbg) are not installed")
    assert object_symbols(str(libc)) == "symbols"


def test_object_symbols_is_unknown_for_what_is_not_a_64_bit_elf_file(tmp_path: Path, compiled: dict[str, Path]):
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file at all\n" * 10)
    elf32 = tmp_path / "elf32.so"
    elf32.write_bytes(b"\x7fELF\x01\x01\x01" + bytes(57))
    truncated = tmp_path / "cut.so"
    truncated.write_bytes(compiled["full"].read_bytes()[:64])  # the header, whose section table is missing
    bad_index = tmp_path / "badindex.so"
    header = bytearray(compiled["full"].read_bytes())
    struct.pack_into("<H", header, 0x3E, 0xFFF0)  # e_shstrndx past the section table
    bad_index.write_bytes(bytes(header))
    for path in (text, elf32, truncated, bad_index, tmp_path / "missing.so", tmp_path):
        assert object_symbols(str(path)) == "unknown", path


# --- one side's view: names, libraries, addresses, the interpreter -----------------------------------------------


def test_a_view_names_frames_merges_addresses_per_library_and_says_which_are_stripped(tmp_path: Path):
    libz = "/usr/lib/x86_64-linux-gnu/libz.so.1"
    profile = parse_lines(f"""events: Ir
ob=(1) /venv/pyarrow/libarrow.so.2600
fn=(1) arrow::io::Read
0 10
cob=(2) {libz}
cfn=(2) 0x0000000000001234
calls=1 0
0 50
ob=(2)
fn=(2)
0 20
cfn=(3) 0x0000000000005678
calls=1 0
0 30
fn=(3)
0 30
""".splitlines(keepends=True))
    view = view_of(profile, PerfMap.read(None), "A")
    assert view.total == 60 and not view.python_named
    stacks = {tuple(f.name for f in s): c for s, c in view.folded.items()}
    # two addresses of one stripped library, one calling the other, are one frame
    assert stacks == {("arrow::io::Read",): 10, ("arrow::io::Read", f"{NO_SYMBOLS} libz.so"): 50}
    assert {f.object for s in view.folded for f in s} == {"libarrow.so", "libz.so"}
    (stripped,) = view.stripped
    assert stripped.library == "libz.so" and stripped.cost == 50
    expected = object_symbols(libz) if Path(libz).exists() else "unknown"
    assert stripped.symbols == expected


def test_python_functions_take_the_interpreters_frames_below_them_as_their_own_cost(tmp_path: Path):
    perf = tmp_path / "perf.map"
    perf.write_text("7f0000001000 40 py::read_table:/v/site-packages/pyarrow/parquet/core.py\n")
    # --separate-callers=1: each function named with its caller (the first has none: it is where the call began)
    profile = parse_lines("""events: Ir
ob=(1) /usr/bin/python3.12
fn=(1) _PyEval_EvalFrameDefault
0 5
cob=(2) ???
cfn=(2) 0x7f0000001010'_PyEval_EvalFrameDefault
calls=1 0
0 95
ob=(2)
fn=(2)
0 1
cob=(1)
cfn=(3) _PyEval_EvalFrameDefault'0x7f0000001010
calls=1 0
0 94
ob=(1)
fn=(3)
0 14
cob=(3) /v/pyarrow/lib.cpython-312-x86_64-linux-gnu.so
cfn=(4) __pyx_pw_7pyarrow_3lib_5Table_25from_pandas'_PyEval_EvalFrameDefault
calls=1 0
0 80
ob=(3)
fn=(4)
0 80
""".splitlines(keepends=True))
    view = view_of(profile, PerfMap.read(perf), "A")
    assert view.python_named
    stacks = {tuple(f.name for f in s): c for s, c in view.folded.items()}
    python = "py::read_table (pyarrow/parquet/core.py)"
    # the interpreter below the Python function is folded into it; the one above the first Python function stays
    assert stacks == {("_PyEval_EvalFrameDefault",): 5, ("_PyEval_EvalFrameDefault", python): 15,
                      ("_PyEval_EvalFrameDefault", python, "pyarrow.lib.Table.from_pandas"): 80}
    assert sum(view.folded.values()) == view.total == 100


def test_fold_interpreter_keeps_interpreter_frames_below_native_code():
    from colbench.profiles.callgrind import Frame

    eval_ = Frame("_PyEval_EvalFrameDefault", "python3.12")
    py_f, py_g = Frame("py::f (a.py)", PYTHON_OBJECT), Frame("py::g (a.py)", PYTHON_OBJECT)
    cython = Frame("pyarrow.lib.f", "lib.cpython-312.so")
    call = Frame("PyObject_Call", "python3.12")
    folded = {(eval_, py_f, eval_, cython, call, eval_, py_g): 7.0, (eval_, py_f, eval_): 3.0}
    assert fold_interpreter(folded, {"python3.12"}) == {
        (eval_, py_f, cython, call, eval_, py_g): 7.0,  # the C API called from Cython is native code's cost
        (eval_, py_f): 3.0,
    }
