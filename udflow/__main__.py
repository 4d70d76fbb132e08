"""`python -m udflow ...` is the `udflow` command (see udflow.cli)."""

import sys

from udflow.cli import main

if __name__ == "__main__":
    sys.exit(main())
