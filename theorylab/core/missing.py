"""Data that a computation needs but this machine does not have.

theorylab never downloads data at run time. A computation that needs local files (the
Fashion-MNIST idx files of Debian's ``dataset-fashion-mnist``) raises [`MissingDataError`][]
when they are absent; ``python -m theorylab figures`` and ``python -m theorylab check`` catch it,
report the figure or claim as *skipped* with its ``reason`` (one line naming
the package to install) and go on with the rest.
"""

from __future__ import annotations

__all__ = ["MissingDataError"]


class MissingDataError(FileNotFoundError):
    """Files a computation needs are not on this machine.

    **Arguments:**

    - `message`: the full message (which files are missing, where they were looked for).
    - `reason`: one short line for a summary, naming what is needed and how to install it,
      e.g. ``"needs Fashion-MNIST (apt-get install dataset-fashion-mnist)"``.
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
