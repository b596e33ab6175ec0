"""Hypothesis profiles for the property suite.

- ``ci``: extends hypothesis's built-in ``ci`` profile (derandomized, no example database,
  ``print_blob``) with few examples and no deadline, so the whole property suite stays around a
  minute on 2 cores. Loaded when ``CI`` is set (CI=true in CI).
- ``dev``: more examples, random seeds and a local example database, for hunting bugs.
- ``thorough``: 500 examples per property (``HYPOTHESIS_PROFILE=thorough``), before a release.

``HYPOTHESIS_PROFILE`` overrides the choice.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["register_profiles", "load_default_profile"]

_SUPPRESS = (HealthCheck.too_slow, HealthCheck.data_too_large)


def register_profiles() -> str:
    """Register ``ci``, ``dev`` and ``thorough`` and load one (``HYPOTHESIS_PROFILE``, else
    ``ci`` under CI, else ``dev``); return its name."""
    common = {"deadline": None, "suppress_health_check": _SUPPRESS}
    settings.register_profile("ci", parent=settings.get_profile("ci"), max_examples=40, **common)
    settings.register_profile("dev", max_examples=100, **common)
    settings.register_profile("thorough", max_examples=500, **common)
    return load_default_profile()


def load_default_profile() -> str:
    name = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    settings.load_profile(name)
    return name
