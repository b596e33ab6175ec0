"""Testing helpers: hypothesis profiles ([`register_profiles`][]). Each paper keeps its
hypothesis strategies beside its code (``theorylab.jelassi2022.testing``)."""

from .profiles import register_profiles

__all__ = ["register_profiles"]
