"""A memory profile of one case's timed call: the worker under heaptrack, Arrow's pools made visible to it.

`explain --metric memory` and `run --profile-memory` run the case again in a fresh worker, launched as its own
executions are (same spec, variables, threads, input files), as the workload of `heaptrack -o FILE`. Why heaptrack,
and what each tracer sees of each allocator, is measured in docs/explain.md ("Where the memory went"):

- heaptrack (Debian's `heaptrack` package) LD_PRELOADs a library that records every malloc-family call with its
  native stack, unwound at the call; `heaptrack_interpret` resolves the frames (names, libraries) as the process
  runs and the file it writes is small (zstd).
- Arrow's default pools on Linux (mimalloc, jemalloc) are linked into libarrow and take their memory with `mmap`
  in large arenas they keep: no malloc interposer sees the allocations inside them. libarrow calls its pool
  backends through its PLT (`arrow_mi_malloc_aligned`, `arrow_mi_realloc_aligned`, `arrow_mi_free`, and
  `JemallocAllocator::{Allocate,Reallocate,Deallocate}Aligned`), so a small preloaded shim (`POOL_SHIM_SOURCE`,
  compiled on first use into `$COLBENCH_HOME/heaptrack/`) defines them, calls libarrow's own, and reports each
  block to heaptrack's API (`heaptrack_malloc` / `heaptrack_free`). The memory still comes from the pool the case
  asked for. `allocator=system` is seen directly (posix_memalign).
- Only the timed call is recorded (workers/python/heap_window.py pauses heaptrack from the start and resumes it
  around the call), so the profile is the call's own allocations: the peak is the high-water mark of the bytes the
  call allocated and still held, and the churn is all it allocated.

Kept: heaptrack's file as written (`profile.heaptrack.zst`) and `memory.json` (the worker's RSS figures around the
call, the pool and its peak), read by colbench/profiles/heaptrack.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import time
from pathlib import Path

from colbench.model.records import CaseSpec
from colbench.paths import colbench_home, owned_dir, remove, write_atomic
from colbench.runner.isolate import WorkerLaunch, run_worker
from colbench.runner.profile import ProfileRun, failure_text
from colbench.workers.python.heap_window import WINDOW_VAR

HEAPTRACK_PROFILE = "profile.heaptrack.zst"
SIDECAR = "memory.json"
#: heaptrack unwinds a stack per allocation: a Parquet read's timed call runs 10-30x slower, the process ~2x
TIMEOUT_FACTOR = 10.0
HEAPTRACK_INSTALL = "Debian/Ubuntu: `apt-get install heaptrack`; Fedora: `dnf install heaptrack`"

POOL_SHIM_SOURCE = r"""
/* colbench's Arrow pool shim: report the blocks of Arrow's own pools (mimalloc, jemalloc: linked into libarrow,
   invisible to malloc interposers) to heaptrack, one by one. The pool that serves them is unchanged. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

__attribute__((weak)) void heaptrack_malloc(void *ptr, size_t size);
__attribute__((weak)) void heaptrack_free(void *ptr);

/* libarrow is dlopen'ed RTLD_LOCAL by Python: find it among the loaded objects and look the real function up. */
static int find_arrow(struct dl_phdr_info *info, size_t n, void *out) {
    (void)n;
    const char *slash = strrchr(info->dlpi_name, '/');
    if (slash && strncmp(slash + 1, "libarrow.so", 11) == 0) {
        *(void **)out = dlopen(info->dlpi_name, RTLD_NOLOAD | RTLD_NOW);
        return 1;
    }
    return 0;
}
static void *real(const char *name) {
    static void *arrow;
    if (!arrow) dl_iterate_phdr(find_arrow, &arrow);
    return arrow ? dlsym(arrow, name) : NULL;
}
static __thread int depth;
/* blocks the shim took over, whether or not heaptrack records at the moment: the worker allocates one buffer from
   Arrow's default pool before the timed call and reads this to learn whether the shim sees that pool */
static long taken;
long colbench_poolshim_taken(void) { return taken; }
static void report_alloc(void *p, size_t size) {
    if (p && size) { taken++; if (heaptrack_malloc) heaptrack_malloc(p, size); }
}
static void report_free(void *p) { if (p && heaptrack_free) heaptrack_free(p); }

void *arrow_mi_malloc_aligned(size_t size, size_t alignment) {
    static void *(*f)(size_t, size_t);
    if (!f) f = (void *(*)(size_t, size_t))real("arrow_mi_malloc_aligned");
    depth++; void *p = f(size, alignment); depth--;
    if (!depth) report_alloc(p, size);
    return p;
}
void *arrow_mi_realloc_aligned(void *old, size_t size, size_t alignment) {
    static void *(*f)(void *, size_t, size_t);
    if (!f) f = (void *(*)(void *, size_t, size_t))real("arrow_mi_realloc_aligned");
    depth++; void *p = f(old, size, alignment); depth--;
    if (!depth && p) { report_free(old); report_alloc(p, size); }
    return p;
}
void arrow_mi_free(void *p) {
    static void (*f)(void *);
    if (!f) f = (void (*)(void *))real("arrow_mi_free");
    if (!depth) report_free(p);
    depth++; f(p); depth--;
}

typedef struct { void *state; } Status;  /* arrow::Status, returned through a hidden pointer; NULL state: OK */
static void *zero_area;                  /* Arrow's shared zero-size area: never a block */
#define JE "_ZN5arrow11memory_pool8internal17JemallocAllocator"
void *_ZN5arrow11memory_pool8internal17JemallocAllocator15AllocateAlignedEllPPh(
        Status *ret, int64_t size, int64_t alignment, uint8_t **out) {
    static void *(*f)(Status *, int64_t, int64_t, uint8_t **);
    if (!f) f = real(JE "15AllocateAlignedEllPPh");
    depth++; void *r = f(ret, size, alignment, out); depth--;
    if (!depth && ret->state == NULL) { if (size == 0) zero_area = *out; else report_alloc(*out, (size_t)size); }
    return r;
}
void *_ZN5arrow11memory_pool8internal17JemallocAllocator17ReallocateAlignedElllPPh(
        Status *ret, int64_t old_size, int64_t new_size, int64_t alignment, uint8_t **ptr) {
    static void *(*f)(Status *, int64_t, int64_t, int64_t, uint8_t **);
    if (!f) f = real(JE "17ReallocateAlignedElllPPh");
    uint8_t *old = *ptr;
    depth++; void *r = f(ret, old_size, new_size, alignment, ptr); depth--;
    if (!depth && ret->state == NULL) {
        if (old != zero_area && old_size) report_free(old);
        if (new_size == 0) zero_area = *ptr; else report_alloc(*ptr, (size_t)new_size);
    }
    return r;
}
void _ZN5arrow11memory_pool8internal17JemallocAllocator17DeallocateAlignedEPhll(
        uint8_t *ptr, int64_t size, int64_t alignment) {
    static void (*f)(uint8_t *, int64_t, int64_t);
    if (!f) f = real(JE "17DeallocateAlignedEPhll");
    if (!depth && ptr != zero_area && size) report_free(ptr);
    depth++; f(ptr, size, alignment); depth--;
}
"""


class TracerUnavailable(RuntimeError):
    """heaptrack (or the shim) cannot be used here: one line with the install command."""


@dataclasses.dataclass(frozen=True)
class Tracer:
    heaptrack: str
    shim: Path


def find_tracer(home: Path | None = None) -> Tracer:
    heaptrack = shutil.which("heaptrack")
    if heaptrack is None:
        raise TracerUnavailable(f"--metric memory traces allocations with heaptrack, which is not installed "
                                f"({HEAPTRACK_INSTALL})")
    for tool in ("zstd", "gzip"):
        if shutil.which(tool):
            break
    else:
        raise TracerUnavailable("heaptrack's output is read with zstd or gzip: install zstd "
                                "(Debian/Ubuntu: `apt-get install zstd`)")
    return Tracer(heaptrack, build_shim(home or colbench_home()))


def build_shim(home: Path) -> Path:
    from colbench.runner.native_build import BuildFailed, build_library

    key = hashlib.sha256(POOL_SHIM_SOURCE.encode()).hexdigest()[:16]
    try:
        return build_library(POOL_SHIM_SOURCE, home / "heaptrack" / f"colbench-poolshim-{key}.so",
                             "Arrow pool shim", home, link=("-ldl",))
    except BuildFailed as exc:
        raise TracerUnavailable(str(exc)) from None


def memory_spec(spec: CaseSpec) -> CaseSpec:
    """The case spec a memory profile runs: the same case and warm-ups, one timed call, measured as for wall time
    (never under Valgrind)."""
    return dataclasses.replace(spec, measure="wall", iterations=1, repeat_within=None)


def memory_profile_case(spec: CaseSpec, launch: WorkerLaunch, tracer: Tracer, folder: Path) -> ProfileRun:
    """Run the case once under heaptrack in a fresh worker and keep `folder/profile.heaptrack.zst` and
    `folder/memory.json`; a failed execution leaves the folder empty and says why."""
    owned_dir(folder, "profile directory")
    for stale in folder.iterdir():
        remove(stale, within=folder)
    base = folder / "profile.heaptrack"
    preload = ":".join(p for p in (str(tracer.shim), launch.env.get("LD_PRELOAD", "")) if p)
    traced = dataclasses.replace(
        launch, command=[tracer.heaptrack, "--output", str(base), *launch.command],
        env={**launch.env, "LD_PRELOAD": preload, WINDOW_VAR: "1"}, timeout_s=launch.timeout_s * TIMEOUT_FACTOR,
        memory_limit_bytes=None,  # heaptrack's own tables are not the case's memory
        cpus=None, quietest=False)  # not pinned: heaptrack_interpret resolves frames beside the worker, on any CPU
    started = time.monotonic()
    outcome = run_worker(memory_spec(spec), traced)
    seconds = time.monotonic() - started
    report = outcome.report
    written = [p for p in folder.iterdir() if p.name.startswith(base.name + ".")]
    error = failure_text(report)
    if error is None and not written:
        error = "heaptrack wrote no profile (is it working? try `heaptrack true`)"
    if error:
        for stale in folder.iterdir():
            remove(stale, within=folder)
        return ProfileRun(seconds, error=error)
    kept = folder / HEAPTRACK_PROFILE
    if written[0] != kept:  # heaptrack writes .gz where zstd is missing: kept under its own suffix
        kept = folder / ("profile.heaptrack" + written[0].name.removeprefix(base.name))
    sample = {name: values[-1] for name, values in report.samples.items() if values}
    memory = report.memory or {}
    sidecar = {"rss_before_first_call_bytes": sample.get("rss_before_first_call_bytes"),
               "rss_before_call_bytes": sample.get("rss_before_call_bytes"),
               "call_peak_rss_bytes": sample.get("call_peak_rss_bytes"),
               "process_peak_rss_bytes": memory.get("peak_rss_bytes"),
               "pool": (report.allocator or {}).get("actual"), "traced_pool": (report.allocator or {}).get("traced"),
               "pool_peak_bytes": memory.get("engine_peak_bytes"),
               "traced_call_s": sample.get("wall_s"), "seconds": round(seconds, 2),
               "python": (report.runtime or {}).get("version")}
    write_atomic(folder / SIDECAR, json.dumps(sidecar, indent=1).encode())
    return ProfileRun(seconds, kept, warnings=list(report.warnings))

