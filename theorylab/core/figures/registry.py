"""Registry of paper figures: each figure is a function registered under a stable id.

A figure module registers its figures at import time:

```python
from theorylab.core.figures import FigureContext, FigureResult, new_figure, register

@register(
    "mypaper-fig4",
    paper="mypaper",
    paper_figure="Figure 4",
    title="Learned attention against the paper's prediction",
    caption="...what is shown, and which settings/data were used...",
    data_source="synthetic: the paper's data model",
)
def fig4(ctx: FigureContext) -> FigureResult:
    fig = new_figure((10.0, 3.0))
    ...  # draw on fig, using ctx.quick / ctx.seed / ctx.device
    return FigureResult(fig, headline={"final_test_error": 0.03}, settings={"D": 10})
```

and the paper's `load_figures()` imports the module (one line; see `theorylab.core.paper`).
The runner ([`run_figures`][theorylab.core.figures.run_figures], or
`python -m theorylab figures`) calls the function inside
`figure_theme()`, saves `<out>/<id>.pdf` and `<out>/<id>.png` (plus `<out>/<id>-<name>.*` for
each entry of `FigureResult.extra`) and records the figure in `<out>/manifest.json`.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from theorylab.core.atomic_io import atomic_write_bytes

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "DPI",
    "FigureContext",
    "FigureResult",
    "FigureSpec",
    "figure_theme",
    "get_figure",
    "list_figures",
    "new_figure",
    "register",
    "renamed_ids",
    "resolve_id",
    "save_figure",
    "unregister",
]

DPI = 150
"""Resolution of the PNG files (the PDF is vector)."""

_PDF_METADATA = {"CreationDate": None, "Creator": None, "Producer": None}
_PNG_METADATA = {"Software": None}


@dataclass(frozen=True)
class FigureContext:
    """What a figure function gets.

    - `out`: output folder (the runner saves there; a figure may write extra data files there).
    - `quick`: if True, use tiny settings so that the figure renders in seconds (the picture need
      not be meaningful, only the code path exercised).
    - `device`: torch device string, `"cpu"` or `"cuda"`.
    - `seed`: base seed; the figure must be deterministic given it.
    - `progress`: whether inner loops may show tqdm bars (False when stderr is not a TTY).
    """

    out: Path
    quick: bool = False
    device: str = "cpu"
    seed: int = 0
    progress: bool = False

    def __post_init__(self) -> None:
        if self.device not in ("cpu", "cuda") and not self.device.startswith("cuda:"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {self.device!r}")
        object.__setattr__(self, "out", Path(self.out))

    def tqdm(self, iterable: Iterable, **kwargs: Any) -> Iterator:
        """`tqdm(iterable)` that is silent unless `progress`; bars do not stay on screen."""
        from tqdm.auto import tqdm

        kwargs.setdefault("leave", False)
        return iter(tqdm(iterable, disable=not self.progress, **kwargs))


@dataclass
class FigureResult:
    """What a figure function returns.

    - `figure`: the main matplotlib `Figure` (saved as `<id>.pdf` / `<id>.png`); build it with
      `new_figure` so that its size is fixed.
    - `headline`: headline numbers (JSON-serialisable scalars or short lists), e.g. final test
      error; they go into the manifest next to the paper's values.
    - `settings`: the settings actually used (JSON-serialisable), recorded in the manifest.
    - `extra`: optional additional figures, saved as `<id>-<name>.pdf` / `.png`.
    - `reading`: sentences generated from the measured numbers (the caption's measured part;
      a static caption holds no measured number), written to the manifest beside the caption.
    - `data_source`: the data actually used when they differ from the registered
      `data_source` (a stand-in data set of a quick run); None keeps the registered one.
    """

    figure: Figure
    headline: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Figure] = field(default_factory=dict)
    reading: list[str] = field(default_factory=list)
    data_source: str | None = None


@dataclass(frozen=True)
class FigureSpec:
    """A registered figure: stable `id`, the `paper` it belongs to (``"mypaper"``), the
    `paper_figure` it reproduces (e.g. "Figure 5"), a one-line `title`, a `caption` (what is
    plotted, stand-in data said plainly), the `data_source`, and the function
    `func(ctx) -> FigureResult`."""

    id: str
    paper: str
    paper_figure: str
    title: str
    caption: str
    data_source: str
    func: Callable[[FigureContext], FigureResult]
    module: str


_REGISTRY: dict[str, FigureSpec] = {}
#: former id → current id of renamed figures (see `register`'s `aliases`)
_ALIASES: dict[str, str] = {}


def register(
    id: str,
    *,
    paper: str,
    paper_figure: str,
    caption: str,
    data_source: str,
    title: str | None = None,
    aliases: Iterable[str] = (),
) -> Callable[[Callable[[FigureContext], FigureResult]], Callable[[FigureContext], FigureResult]]:
    """Decorator registering `func(ctx) -> FigureResult` under the stable id `id`.

    **Arguments:**

    - `id`: stable id, lower case, ``<paper>-<name>`` (e.g. `"mypaper-fig5"`); must be unique.
    - `paper`: the paper the figure belongs to, e.g. `"mypaper"` (`--only <paper>` runs
      all of its figures).
    - `paper_figure`: the paper figure reproduced, e.g. `"Figure 5"` (or `"none (theorylab)"`).
    - `caption`: full caption; say plainly when stand-in data replace the paper's.
    - `data_source`: where the data come from (data set and package, or "synthetic: ...").
    - `title`: one-line description for `--list`; default: the caption's first sentence.
    - `aliases`: former ids of a renamed figure; they keep working for one release (the
      runner renders under `id` and the command says the figure was renamed).
    """
    if not id or id != id.strip() or any(c.isspace() or c in "/\\" for c in id):
        raise ValueError(f"figure id must be a non-empty name without spaces or slashes: {id!r}")

    def decorator(func: Callable[[FigureContext], FigureResult]):
        if id in _REGISTRY and _REGISTRY[id].func is not func:
            raise ValueError(f"figure id {id!r} is already registered by {_REGISTRY[id].module}")
        line = title if title is not None else caption.split(". ")[0].strip().rstrip(".")
        _REGISTRY[id] = FigureSpec(
            id, paper, paper_figure, line, caption, data_source, func, func.__module__
        )
        for old in aliases:
            if old in _REGISTRY or _ALIASES.get(old, id) != id:
                raise ValueError(f"figure alias {old!r} is already an id or another alias")
            _ALIASES[old] = id
        return func

    return decorator


def unregister(id: str) -> FigureSpec:
    """Remove the figure registered under `id` and return it (KeyError listing the known ids
    otherwise); a paper removed from the entry points takes its figures with it."""
    spec = get_figure(id)
    del _REGISTRY[spec.id]
    for old in [a for a, new in _ALIASES.items() if new == spec.id]:
        del _ALIASES[old]
    return spec


def resolve_id(id: str) -> str:
    """The current id of `id`: itself, or the new id of a renamed figure (an alias)."""
    return _ALIASES.get(id, id)


def renamed_ids() -> dict[str, str]:
    """Former id → current id of every renamed figure (the aliases that still work)."""
    return dict(_ALIASES)


def get_figure(id: str) -> FigureSpec:
    """The `FigureSpec` registered under `id` or under a former id of it (KeyError listing the
    known ids otherwise)."""
    try:
        return _REGISTRY[resolve_id(id)]
    except KeyError:
        known = ", ".join(_REGISTRY) or "(none)"
        raise KeyError(f"unknown figure id {id!r}; known ids: {known}") from None


def list_figures() -> list[FigureSpec]:
    """All registered figures, sorted by id (so paper figures come in paper order)."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def new_figure(size: tuple[float, float], **kwargs: Any) -> Figure:
    """A matplotlib `Figure` of fixed size (inches), constrained layout, not tied to pyplot."""
    from matplotlib.figure import Figure

    kwargs.setdefault("layout", "constrained")
    return Figure(figsize=size, dpi=DPI, **kwargs)


@contextmanager
def figure_theme() -> Iterator[None]:
    """Seaborn theme for all figures, set on entry and fully undone on exit."""
    import matplotlib as mpl
    import seaborn as sns

    with mpl.rc_context():
        sns.set_theme(context="paper", style="whitegrid", palette="colorblind", font_scale=1.0)
        mpl.rcParams.update({
            "pdf.fonttype": 42,
            "svg.hashsalt": "theorylab",
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
            "axes.titlesize": "medium",
        })
        yield


def _atomic_save(fig: Figure, path: Path, fmt: str, metadata: dict) -> None:
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=DPI, metadata=metadata)
    atomic_write_bytes(path, buf.getvalue())


def save_figure(fig: Figure, out: str | os.PathLike, stem: str) -> list[Path]:
    """Save `fig` as `<out>/<stem>.pdf` and `<out>/<stem>.png`, atomically, without timestamps.

    The figure size is kept as built (no tight bounding box), so output sizes are fixed.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt, meta in (("pdf", _PDF_METADATA), ("png", _PNG_METADATA)):
        path = out / f"{stem}.{fmt}"
        _atomic_save(fig, path, fmt, meta)
        paths.append(path)
    return paths


def stderr_is_tty() -> bool:
    """Whether progress bars should be shown (stderr is an interactive terminal)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False
