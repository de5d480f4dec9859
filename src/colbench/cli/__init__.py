"""The `colbench` command line: thin, parses and prints; the work is in the layers below."""
