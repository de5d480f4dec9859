"""Every asv feature colbench supports, in a few cheap benchmarks (tests/sources/test_asv_source.py)."""
import os

from .common import make_data, spin

LOG = os.environ.get("ASVPROBE_LOG")


def _log(what):
    if LOG:
        with open(LOG, "a") as handle:
            handle.write(f"{os.getpid()} {what}\n")


def setup(*args):
    """Module-level setup: runs before every benchmark of this module."""
    _log("module-setup")


def time_function():
    spin(2000)


time_function.number = 3
time_function.repeat = 4
time_function.warmup_time = 0.0


class TimeSuite:
    params = ([100, 300], ["sum", "sorted"])
    param_names = ["n", "how"]
    skip_params = [(300, "sorted")]
    timeout = 60
    rounds = 3

    def setup(self, n, how):
        if how == "sorted" and n == 100 and os.environ.get("ASVPROBE_NOT_IMPLEMENTED"):
            raise NotImplementedError("not for this combination")
        self.data = make_data(n)

    def teardown(self, n, how):
        _log("teardown")

    def time_op(self, n, how):
        if how == "sum":
            sum(self.data)
        else:
            sorted(self.data)

    def track_first(self, n, how):
        return round(self.data[0], 12)

    track_first.unit = "value"


class CamelCase:
    def setUp(self):
        self.items = list(range(500))

    def time_reverse(self):
        list(reversed(self.items))


class Cached:
    def setup_cache(self):
        _log("setup-cache")
        return {"rows": list(range(1000))}

    def setup(self, cache):
        self.rows = cache["rows"]

    def time_len(self, cache):
        return len(cache["rows"]) + len(self.rows)


def timeraw_import():
    return "import json"


def mem_list():
    return [0] * 1000


def peakmem_alloc():
    bytearray(20 * 1024 * 1024)


def track_constant():
    return 42


track_constant.unit = "widgets"
