"""``python -m theorylab <command> ...``: the ``theorylab`` command ([`theorylab.commands`][])."""

import sys

from theorylab.commands import main

if __name__ == "__main__":
    sys.exit(main())
