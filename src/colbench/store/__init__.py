"""Results stores (DuckDB by default, PostgreSQL for teams) and exports."""
