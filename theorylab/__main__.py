"""``python -m theorylab <command> ...``: the ``theorylab`` command ([`theorylab.cli`][])."""

import sys

from theorylab.cli import main

if __name__ == "__main__":
    sys.exit(main())
