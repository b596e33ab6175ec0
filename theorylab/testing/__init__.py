"""Testing helpers: hypothesis strategies ([`strategies`][]) and profiles
([`register_profiles`][])."""

from . import strategies
from .profiles import register_profiles

__all__ = ["strategies", "register_profiles"]
