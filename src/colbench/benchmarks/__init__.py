"""Built-in benchmarks (one module per experiment family), suites and the registry."""
