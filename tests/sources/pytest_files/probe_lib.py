"""Stands in for the library under test when no wheel of `bisectprobe` is installed."""
try:
    from bisectprobe import work as _timed  # the tests' wheels: seconds of spinning, FACTOR times

    def work(units):
        return _timed(units / 1e6)
except ImportError:
    def work(units):
        acc = 0
        for i in range(units):
            acc = (acc * 31 + i) & 0xFFFF
        return acc
