"""The memory timeline drawn: per device group, the stacked memory of each entry (init, first
optimizer step, each phase; :mod:`rlmcost.reports.timeline`) beside a Gantt chart of the
group's jobs (their predicted start and end seconds).

matplotlib is optional (the ``plot`` extra); without it :func:`plot_timeline` raises a
one-line :class:`~rlmcost.errors.SpecError` naming the extra. The figure is built without
pyplot (no display or backend needed; a notebook shows :func:`timeline_figure`'s result
inline); the file's suffix picks the format (``.png``, ``.svg``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlmcost.errors import SpecError
from rlmcost.reports.timeline import TERMS, GroupTimeline

FORMATS = (".png", ".svg")
GIB = 2**30

MISSING = (
    'drawing the timeline needs matplotlib: pip install "rlmcost[plot]" (or drop --plot)'
)


def _matplotlib() -> tuple[Any, Any]:
    """matplotlib's Figure class and the tab10 colormap (object-oriented: no pyplot, no
    backend switch, so a notebook's inline backend stays as it is)."""
    try:
        import matplotlib
        from matplotlib.figure import Figure
    except ImportError:
        raise SpecError(MISSING) from None
    return Figure, matplotlib.colormaps["tab10"]


def check_path(path: str) -> Path:
    """``path`` as a Path when its suffix is one :func:`plot_timeline` writes; SpecError
    otherwise (checked before the evaluation, so a bad name fails fast)."""
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise SpecError(
            f"--plot {path}: give a file ending in {' or '.join(FORMATS)}, e.g. --plot "
            "timeline.png"
        )
    return p


def timeline_figure(groups: Sequence[GroupTimeline], title: str = "") -> Any:
    """The figure of ``groups``: a row per group, its memory per entry (stacked terms, the
    overhead on top, the capacity dashed) beside its jobs' Gantt chart on a shared time axis."""
    figure, colors = _matplotlib()
    rows = len(groups)
    fig = figure(figsize=(13, 3.4 * rows))
    axes = fig.subplots(rows, 2, squeeze=False, gridspec_kw={"width_ratios": [3, 2]})
    end = max((e.end_s or 0.0 for tl in groups for e in tl.phases), default=0.0)
    legend: dict[str, Any] = {}
    for row, tl in enumerate(groups):
        _memory_panel(axes[row][0], tl, colors)
        _gantt_panel(axes[row][1], tl, colors)
        axes[row][1].set_xlim(0, end * 1.02 or 1)
        handles, labels = axes[row][0].get_legend_handles_labels()
        legend.update(zip(labels, handles, strict=True))
    order = [t for t in (*TERMS, "overhead") if t in legend]
    fig.legend([legend[t] for t in order], order, loc="lower center", ncol=len(order), fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    return fig


def plot_timeline(groups: Sequence[GroupTimeline], path: str, title: str = "") -> Path:
    """Write the figure of ``groups`` to ``path`` (PNG or SVG by suffix); the path written."""
    out = check_path(path)
    fig = timeline_figure(groups, title)
    try:
        fig.savefig(out)
    except OSError as exc:
        raise SpecError(f"--plot {path}: cannot write the file ({exc.strerror})") from None
    return out


def _memory_panel(ax: Any, tl: GroupTimeline, colors: Any) -> None:
    """Stacked allocated terms per entry, the allocator's and the fixed overhead on top, the
    device's capacity as a line (GiB)."""
    xs = range(len(tl.entries))
    bottom = [0.0] * len(tl.entries)
    for i, term in enumerate(TERMS):
        values = [getattr(e.memory, term) / GIB for e in tl.entries]
        if not any(values):
            continue
        ax.bar(xs, values, bottom=bottom, color=colors(i % 10), label=term)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    extra = [(e.device_bytes - e.allocated_bytes) / GIB for e in tl.entries]
    if any(extra):
        ax.bar(xs, extra, bottom=bottom, color="lightgrey", hatch="//", label="overhead")
    ax.axhline(tl.capacity_bytes / GIB, color="black", linestyle="--", linewidth=1)
    ax.set_xticks(list(xs), [e.phase for e in tl.entries], rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("GiB per device")
    ax.set_title(f"{tl.group} ({tl.gpus} GPUs): memory per phase", fontsize=9)


def _gantt_panel(ax: Any, tl: GroupTimeline, colors: Any) -> None:
    """One bar per job from its start to its end (predicted seconds)."""
    jobs = [e for e in tl.phases if e.start_s is not None and e.end_s is not None]
    for i, e in enumerate(jobs):
        assert e.start_s is not None and e.end_s is not None
        ax.barh(i, e.end_s - e.start_s, left=e.start_s, color=colors(i % 10))
    ax.set_yticks(range(len(jobs)), [e.what for e in jobs], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds (predicted)")
    ax.set_title(f"{tl.group}: jobs", fontsize=9)
