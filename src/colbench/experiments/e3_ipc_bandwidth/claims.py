"""The claims of E3 (Arrow Java in-memory read bandwidth, 2018): 1 KiB binary values through the copying stream."""

from __future__ import annotations

from colbench.experiments.e3_ipc_bandwidth.published import E3_CORE_SCALING_GBPS, E3_GBPS
from colbench.model.claims import Claim, ClaimCase, Untestable


def _read(access: str, batch_rows: int, **more: object) -> ClaimCase:
    return ClaimCase("ipc-bandwidth", {"type": "binary", "value_size": 1024, "source": "stream", "access": access,
                                       "batch_rows": batch_rows, **more}, metric="gbps")


CLAIMS = (
    Claim("e3-batch-10k-vs-100k", "e3", "10 MB batches (10k rows) read faster than 100 MB ones (holder API)",
          _read("offsets", 10_000), _read("offsets", 100_000),
          published=E3_GBPS[("offsets", 10_000)] / E3_GBPS[("offsets", 100_000)], source="28.82 vs 16.50 Gbps"),
    Claim("e3-batch-10k-vs-1k", "e3", "1 MB batches (1k rows) read slower than 10 MB ones (holder API)",
          _read("offsets", 10_000), _read("offsets", 1_000),
          published=E3_GBPS[("offsets", 10_000)] / E3_GBPS[("offsets", 1_000)], source="28.82 vs 11.19 Gbps"),
    Claim("e3-holder-vs-default", "e3", "the holder API (offsets only) beats the default get() (a copy per value)",
          _read("offsets", 100_000), _read("materialize", 100_000),
          published=E3_GBPS[("offsets", 100_000)] / E3_GBPS[("materialize", 100_000)],
          source="16.50 vs 9.72 Gbps at 100k-row batches"),
    Claim("e3-two-threads", "e3", "two threads scale the holder read by most of a second core (≥ 1.5×)",
          _read("offsets", 10_000, threads=2), _read("offsets", 10_000, threads=1), at_least=1.5,
          published=E3_CORE_SCALING_GBPS[2] / E3_CORE_SCALING_GBPS[1], source="52.1 vs 28.8 Gbps",
          ignore=("threads",)),
    # against the read bandwidth (read-only, like the scan): a copy moves every byte twice, so "% of memcpy" for a
    # read would exceed 100% on any machine
    Claim("e3-scan-vs-read-bandwidth", "e3",
          "a scan of every value byte reaches ≥ 80% of this machine's read bandwidth",
          ClaimCase("ipc-bandwidth", {"type": "binary", "value_size": 1024, "source": "buffer", "access": "scan",
                                      "batch_rows": 10_000}, metric="gbps"),
          ClaimCase("ipc-bandwidth", {}, metric="gbps", calibration="read_gbps"), at_least=0.8,
          source="the post's best case ran at memory speed (28.8 Gbps per core)"),
)

UNTESTABLE = (
    Untestable("e3", "16 cores reach 168.8 Gbps", "this machine has 2 cores; the two-thread claim is the part of "
               "the scaling curve it can test"),
    Untestable("e3", "cache-miss rates explain the batch-size optimum", "needs hardware counters (perf), which "
               "these virtual machines do not expose"),
    Untestable("e3", "int columns: 5.42 → 14.78 Gbps with the unsafe reader", "colbench's readers are the default "
               "get(), the holder API and a zero-copy scan; the unsafe API is not measured"),
)
