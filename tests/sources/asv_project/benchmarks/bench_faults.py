"""Benchmarks that fail on purpose: each must be an error row with its cause, and the rest of the suite runs."""
import os
import time


class Faults:
    timeout = 5

    def time_crash(self):
        os.abort()

    def time_hang(self):
        time.sleep(600)


class BrokenSetup:
    def setup(self):
        raise ValueError("setup fails on purpose")

    def time_never(self):
        pass
