"""Helpers of the suite, imported relatively (as asv suites do: `from .common import …`)."""
import random


def make_data(n):
    # unseeded on purpose: colbench seeds `random` (and numpy) before setup, so every process makes the same data
    return [random.random() for _ in range(n)]


def spin(units):
    acc = 0
    for i in range(units):
        acc = (acc * 31 + i) & 0xFFFF
    return acc
