"""The model: benchmarks, params and grids, the result record and its schema."""
