"""The Python worker and the code it alone runs, in the child process (docs/protocol.md)."""
