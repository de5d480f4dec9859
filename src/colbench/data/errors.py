"""The one exception type of the data layer.

Messages are one line and say what to do next: the CLI prints them as they are, without a traceback.
"""

from __future__ import annotations


class DataError(Exception):
    """A data set cannot be provided as asked; the message tells the user how to fix it."""
