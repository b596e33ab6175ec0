"""Axes set-up that the figures share: labels, log scales, title and legend of a panel in one
call, image panels without ticks, a twin y axis and one legend over both axes."""

from __future__ import annotations

from typing import Any

__all__ = ["image_axes", "merged_legend", "style_axes", "twin_y"]


def style_axes(ax, xlabel: str | None = None, ylabel: str | None = None,
               title: str | None = None, *, log: str = "", title_size: Any = None,
               legend: Any = None) -> None:
    """Set up a panel after its data are drawn: `log` names the axes on a log scale (``"x"``,
    ``"y"`` or ``"xy"``); labels and title where given (`title_size`: the title's font size,
    else the theme's); `legend`: a font size, or the keyword arguments of ``ax.legend`` (a
    dict), or None for no legend."""
    if "x" in log:
        ax.set_xscale("log")
    if "y" in log:
        ax.set_yscale("log")
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if title is not None:
        ax.set_title(title, **({} if title_size is None else {"fontsize": title_size}))
    if legend is not None:
        ax.legend(**(legend if isinstance(legend, dict) else {"fontsize": legend}))


def image_axes(ax) -> None:
    """An image panel: no ticks, no grid lines."""
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)


def twin_y(ax, ylabel: str):
    """A second y axis on the right of `ax` (no grid of its own), labelled `ylabel`."""
    twin = ax.twinx()
    twin.set_ylabel(ylabel)
    twin.grid(False)
    return twin


def merged_legend(ax, *others, **kwargs) -> None:
    """One legend on `ax` with the entries of `ax` and of the `others` (twin axes)."""
    handles, labels = ax.get_legend_handles_labels()
    for other in others:
        h, lab = other.get_legend_handles_labels()
        handles, labels = handles + h, labels + lab
    ax.legend(handles, labels, **kwargs)
