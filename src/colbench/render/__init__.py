"""How numbers, table cells and figures look: shared by the experiments and the reports."""
