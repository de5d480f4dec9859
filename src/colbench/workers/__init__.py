"""The workers: the code that runs one case in a fresh process and writes result.json (docs/protocol.md).

`python/` is the Python worker (`python -m colbench.worker`), with what it loads only inside the child: the
callgrind probe, perf's control FIFO, page-cache eviction and injected extra work. `r/` and `java/` are the R
and Java workers' sources, built and started by `colbench.runtimes`. All three read the same `case.json` and
write the same `result.json`.
"""
