"""Statistics over benchmark results: summaries, A/B verdicts, change points, A/A calibration.

Pure: result documents and numbers in, dataclasses out. Nothing here opens a store, starts a process or reads
the machine; the runner and the CLI fetch the data (colbench.store.selection) and hand it over. The import
contract in pyproject.toml keeps it so.
"""
