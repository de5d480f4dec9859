"""Profiles of one case's timed call: where they live in the home, how they are read, named, stacked and diffed.

- `heaptrack.py`: heaptrack's file read into the live allocations at the timed call's peak, and its churn;
- `memory.py`: a memory peak as one side ready to compare (allocation sites named as `explain` names functions).

What runs a worker under heaptrack stays in the runner (runner/memory_profile.py); the flame graph is drawn by
render/flamegraph.py. Nothing here starts a worker.
"""
