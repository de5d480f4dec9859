"""Entry point of the Python worker process: `python -m colbench.worker case.json result.json`."""

import sys

from colbench.workers.python.worker import main

if __name__ == "__main__":
    sys.exit(main())
