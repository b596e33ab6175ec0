"""Polynomial activations σ for the simplified ViT, Jelassi et al. (2022), eq. (T).

The activation of (T) could not be read in the paper (RECONSTRUCTED, see the paper notes §2.4):
`"cubic"` is σ(h) = h³ (the usual choice of the authors' group), `"quintic"` is
σ(h) = h⁵ + 0.03·h (the constants of a third-party re-implementation, S7). Any polynomial can be
given by its coefficients in ascending powers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Activation", "NAMED_ACTIVATIONS"]

NAMED_ACTIVATIONS: dict[str, tuple[float, ...]] = {
    "cubic": (0.0, 0.0, 0.0, 1.0),
    "quintic": (0.0, 0.03, 0.0, 0.0, 0.0, 1.0),
}


@dataclass(frozen=True)
class Activation:
    """σ(h) = Σ_k coeffs[k]·h^k, evaluated with Horner's rule on numpy arrays or torch tensors.

    **Arguments:**

    - `coeffs`: polynomial coefficients in ascending powers (``coeffs[k]`` multiplies ``h**k``).
    """

    coeffs: tuple[float, ...]

    @classmethod
    def from_spec(cls, spec: str | Sequence[float]) -> Activation:
        """`"cubic"`, `"quintic"`, or a sequence of coefficients (ascending powers)."""
        if isinstance(spec, str):
            if spec not in NAMED_ACTIVATIONS:
                raise ValueError(
                    f"model.activation: unknown activation {spec!r}; allowed: "
                    f"{sorted(NAMED_ACTIVATIONS)} or a list of polynomial coefficients"
                )
            return cls(NAMED_ACTIVATIONS[spec])
        try:
            if isinstance(spec, (bytes, dict)) or any(isinstance(c, (bool, str)) for c in spec):
                raise TypeError
            coeffs = tuple(float(c) for c in spec)
        except OverflowError:
            raise ValueError("model.activation: coefficients must be finite") from None
        except (TypeError, ValueError):
            raise ValueError(
                f"model.activation: must be 'cubic', 'quintic' or a list of numbers (got {spec!r})"
            ) from None
        if len(coeffs) < 2 or not any(c != 0.0 for c in coeffs[1:]):
            raise ValueError(
                "model.activation: polynomial must have degree >= 1 (a constant σ has no gradient)"
                f" (got {spec!r})"
            )
        if any(c != c or abs(c) == float("inf") for c in coeffs):
            raise ValueError(f"model.activation: coefficients must be finite (got {spec!r})")
        return cls(coeffs)

    @property
    def degree(self) -> int:
        return len(self.coeffs) - 1

    @property
    def is_odd(self) -> bool:
        """True when σ(−h) = −σ(h) (only odd powers)."""
        return all(c == 0.0 for c in self.coeffs[0::2])

    def majorant(self) -> Activation:
        """|σ|(h) = Σ_k |coeffs[k]|·h^k: for h ≥ 0 it bounds |σ(x)| for all |x| ≤ h."""
        return Activation(tuple(abs(c) for c in self.coeffs))

    def derivative(self) -> Activation:
        return Activation(tuple(k * c for k, c in enumerate(self.coeffs))[1:] or (0.0,))

    def __call__(self, h):
        out = self.coeffs[-1]
        for c in reversed(self.coeffs[:-1]):
            out = _mul_add(out, h, c)
        return h * 0 + out if isinstance(out, float) else out

    def value_and_grad(self, h):
        """Return (σ(h), σ'(h)) in one Horner pass.

        Multiplications by a constant 1 and additions of a constant 0 are skipped (they are
        exact, so the values are those of the plain Horner rule): h³ costs 5 array operations
        instead of 15, which was ~30 % of an empirical step at N = 10⁴, D = d = 64 on a CPU."""
        p, dp = self.coeffs[-1], 0.0
        for c in reversed(self.coeffs[:-1]):
            dp = _mul_add(dp, h, p)
            p = _mul_add(p, h, c)
        return (h * 0 + p if isinstance(p, float) else p,
                h * 0 + dp if isinstance(dp, float) else dp)


def _mul_add(a, h, b):
    """a·h + b for an array h, where a and b are arrays or Python floats; a float 0 or 1 factor
    and a float 0 term cost no array operation (a float result means a constant)."""
    if isinstance(a, float):
        if a == 0.0:
            return b
        a_h = h if a == 1.0 else a * h
    else:
        a_h = a * h
    if isinstance(b, float) and b == 0.0:
        return a_h
    return a_h + b
