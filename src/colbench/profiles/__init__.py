"""Profiles of one case's timed call: where they live in the home, how they are read, named, stacked and diffed.

- `stored.py`: where a store's profiles live (`$COLBENCH_HOME/profiles/<store key>/`), listed and removed;
- `callgrind.py`: callgrind's text format read into contexts and call edges; `perf_script.py`: `perf script` samples;
- `symbols.py`: names for frames (libraries, Python functions through the perf map, Cython);
- `stacks.py`: folded call stacks from callgrind's caller chains; `view.py`: one side ready to compare;
- `diff.py`: two sides of a case, the functions whose cost changed most;
- `heaptrack.py`: heaptrack's file read into the live allocations at the timed call's peak, and its churn;
- `memory.py`: a memory peak as one side ready to compare (allocation sites named as `explain` names functions).

What runs a worker under callgrind, perf or heaptrack stays in the runner (runner/profile.py,
runner/perf_profile.py, runner/memory_profile.py); the flame graph is drawn by render/flamegraph.py. Nothing here
starts a process.
"""
