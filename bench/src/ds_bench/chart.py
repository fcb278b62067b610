"""The comparison as a PNG: per metric, ds-server relative to the Node reference."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib

from ds_bench.report import TIMES, ratio_text

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import Patch
from matplotlib.ticker import NullFormatter

if TYPE_CHECKING:
    from pathlib import Path

    from ds_bench.report import Row

_MET = "#2e7d32"
_MISSED = "#c62828"
_NODE = "#9e9e9e"


def draw(rows: list[Row], path: Path, title: str) -> Path:
    """One bar group per metric: Node at 1.0, ds-server at its ratio (log scale)."""
    shown = [row for row in rows if row.ratio is not None]
    several = len({row.config for row in rows}) > 1
    height = 0.38
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.55 * max(1, len(shown))))
    for index, row in enumerate(reversed(shown)):
        ratio = row.ratio
        assert ratio is not None
        better = "higher" if row.metric.higher_is_better else "lower"
        ax.barh(index + height / 2, 1.0, height, color=_NODE)
        ax.barh(index - height / 2, ratio, height, color=_MET if row.met else _MISSED)
        # Right of both the bar and the 1.0 line, so a label never crosses it.
        ax.text(
            max(ratio, 1.0) * 1.03, index - height / 2, ratio_text(ratio), va="center", fontsize=8
        )
        ax.text(
            0.0,
            index,
            f"{f'{row.config}: ' if several else ''}{row.metric.label} "
            f"({row.metric.unit}, {better} is better)  ",
            transform=ax.get_yaxis_transform(),
            ha="right",
            va="center",
            fontsize=8,
        )
    fig.legend(
        handles=[
            Patch(color=_NODE, label="Node reference (= 1.0)"),
            Patch(color=_MET, label="ds-server, target met"),
            Patch(color=_MISSED, label="ds-server, target missed"),
        ],
        loc="lower center",
        ncol=3,
        frameon=False,
        fontsize=8,
    )
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks([])
    ax.set_ylim(-0.7, len(shown) - 0.3)
    ax.set_xlabel("ds-server / Node reference (median); Node = 1.0 in grey")
    ax.set_title(title, fontsize=10)
    lo = min([1.0, *(r.ratio or 1.0 for r in shown)]) / 1.5
    hi = max([1.0, *(r.ratio or 1.0 for r in shown)]) * 1.6
    ax.set_xlim(lo, hi)
    ticks = [t for t in (0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50) if lo <= t <= hi]
    ax.set_xticks(ticks, [f"{t:g}{TIMES}" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    fig.tight_layout(rect=(0, 0.5 / fig.get_figheight(), 1, 1))
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path
