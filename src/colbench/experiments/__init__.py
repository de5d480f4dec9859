"""The five reference experiments, one home each (suite, published figures, table, plots), and the suites."""
