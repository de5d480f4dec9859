"""colbench: how fast data gets into and out of columnar memory, measured and watched over time."""

__version__ = "0.1.0"
