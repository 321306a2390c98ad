"""SmartHome-Bench results as people read them: a markdown table and a bar chart of success per
task type, for one evaluation or several side by side.

matplotlib is imported only when a chart is drawn.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from twin.atomic import write_text

from ..errors import AgentError
from .assist import EVALUATION
from .conversation import is_agent
from .evaluate import OVERALL, RESULTS
from .instances import in_order

METRICS = ("tool_calls", "output_tokens", "violations", "latency_s", "at_call_limit", "repeats")
HEADERS = ("tool calls", "output tokens", "violations", "policy s", "at call limit", "repeats")


class ResultsError(AgentError, ValueError):
    """A results file that cannot be read."""


@dataclass(frozen=True)
class Results:
    """One evaluation's summary: its name, what ran, per task type (and overall) figures, and
    whether each instance (by id) was solved."""

    name: str
    config: dict[str, Any]
    summary: dict[str, dict[str, float]]
    solved: Mapping[str, bool] = field(default_factory=dict)

    @property
    def types(self) -> list[str]:
        """The task types evaluated, without the overall row."""
        return [name for name in self.summary if name != OVERALL]


def load_results(path: Path) -> Results:
    """The results in `path`: a results.json or the evaluation directory that holds one."""
    file = path / RESULTS if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        solved = {i["id"]: bool(i["success"]) for i in data.get("instances", [])}
        return Results(data["name"], data["config"], data["summary"], solved)
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as err:
        raise ResultsError(
            f"Cannot read results from {path}: {err}; give a results.json or a directory "
            "written by `homeflow bench run`"
        ) from err


def markdown(results: Results) -> str:
    """A table of one evaluation: a row per task type and overall."""
    lines = [
        f"**{results.name}** (policy `{_policy(results)}`)",
        "",
        "| type | instances | success | " + " | ".join(HEADERS) + " |",
        "|---|---:|---:|" + "---:|" * len(METRICS),
    ]
    for name, row in results.summary.items():
        label = f"**{name}**" if name == OVERALL else name
        cells = [label, str(int(row["instances"])), _percent(row["success"])]
        lines.append("| " + " | ".join(cells + _metrics(row, results)) + " |")
    return "\n".join(lines) + "\n"


def compare_markdown(results: Sequence[Results]) -> str:
    """One table of several evaluations: a row each, success per task type and overall, and the
    overall means."""
    types = _types(results)
    lines = [
        "| results | policy | " + " | ".join([*types, OVERALL, *HEADERS]) + " |",
        "|---|---|" + "---:|" * (len(types) + 1 + len(METRICS)),
    ]
    for result in results:
        success = [
            _percent(result.summary[t]["success"]) if t in result.summary else "-" for t in types
        ]
        overall = result.summary[OVERALL]
        cells = [result.name, f"`{_policy(result)}`", *success]
        cells += [_percent(overall["success"]), *_metrics(overall, result)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n" + paired_markdown(results)


def paired_markdown(results: Sequence[Results]) -> str:
    """Each evaluation against each one before it on the instances both ran: how many only one
    of them solved, and the exact McNemar test's two-sided p (how likely a difference this
    large is if the two were equally good); empty where no two share instances."""
    lines = []
    for earlier, later in itertools.combinations(results, 2):
        shared = earlier.solved.keys() & later.solved.keys()
        if not shared:
            continue
        won = sum(later.solved[i] and not earlier.solved[i] for i in shared)
        lost = sum(earlier.solved[i] and not later.solved[i] for i in shared)
        cells = [later.name, earlier.name, str(len(shared)), str(won), str(lost)]
        p = mcnemar_p(won, lost)
        lines.append("| " + " | ".join([*cells, f"{p:.3f}" if p >= 0.001 else "<0.001"]) + " |")
    if not lines:
        return ""
    header = [
        "",
        "| results | against | instances | it alone solved | against alone solved | McNemar p |",
        "|---|---|---:|---:|---:|---:|",
    ]
    return "\n".join(header + lines) + "\n"


def mcnemar_p(won: int, lost: int) -> float:
    """The exact McNemar test's two-sided p for `won` and `lost` discordant pairs: a binomial
    test of the smaller count against half of them."""
    pairs = won + lost
    tail = sum(math.comb(pairs, k) for k in range(min(won, lost) + 1)) / (1 << pairs)
    return min(1.0, 2.0 * tail)


def plot_success(results: Sequence[Results], path: Path) -> None:
    """A bar chart of success per task type and overall, one bar per evaluation in each group."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [*_types(results), OVERALL]
    width = 0.8 / len(results)
    # Many groups (the assist cases' categories) read better as rows than as columns.
    rows = len(groups) > 10
    if rows:
        size = (8.0, 1.0 + 0.22 * len(groups) * len(results))
    else:
        size = (max(6.0, 1.2 * len(groups) * len(results) ** 0.5), 4.0)
    figure, axis = plt.subplots(figsize=size)
    for index, result in enumerate(results):
        heights = [100 * result.summary.get(g, {}).get("success", 0.0) for g in groups]
        offsets = [g + (index - (len(results) - 1) / 2) * width for g in range(len(groups))]
        bars = (axis.barh if rows else axis.bar)(offsets, heights, width, label=result.name)
        axis.bar_label(bars, fmt="%.0f", fontsize=7)
    if rows:
        axis.set_yticks(range(len(groups)), groups)
        axis.invert_yaxis()
        axis.set_xlim(0, 110)
        axis.set_xlabel("success (%)")
    else:
        axis.set_xticks(range(len(groups)), groups)
        axis.set_ylim(0, 110)
        axis.set_ylabel("success (%)")
    assist = results[0].config.get("evaluation") == EVALUATION
    axis.set_title(
        "Assist cases: success per category" if assist else "SmartHome-Bench: success per task type"
    )
    if len(results) > 1:
        axis.legend(fontsize=8, frameon=False)
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)


def write_report(results: Sequence[Results], stem: Path) -> list[Path]:
    """`stem`.md (one evaluation's table, or the comparison of several) and `stem`.png (the
    chart), in a folder made if need be; the paths written."""
    table = markdown(results[0]) if len(results) == 1 else compare_markdown(results)
    text, chart = stem.with_suffix(".md"), stem.with_suffix(".png")
    stem.parent.mkdir(parents=True, exist_ok=True)
    write_text(text, table)
    plot_success(results, chart)
    return [text, chart]


def _policy(results: Results) -> str:
    """The policy as run, with the user's home folder written `~`: tables get shared."""
    return shareable(str(results.config.get("policy", "?")))


def shareable(text: str) -> str:
    """`text` with the user's home folder written `~`: tables and results get shared."""
    return text.replace(str(Path.home()), "~")


def _types(results: Sequence[Results]) -> list[str]:
    """The task types of the results, in the benchmark's order (instances.in_order)."""
    return in_order(name for result in results for name in result.types)


def _metrics(row: dict[str, float], results: Results) -> list[str]:
    """The costs as cells; a Home Assistant conversation agent's calls, tokens and refusals
    happen inside Home Assistant, unseen: n/a; results from before the call-limit and repeat
    shares were kept: -."""
    tool_calls, tokens, violations, latency = (row[metric] for metric in METRICS[:4])
    if is_agent(_policy(results)):
        return ["n/a", "n/a", "n/a", f"{latency:.2f}", "n/a", "n/a"]
    shares = [_percent(row[m]) if m in row else "-" for m in ("at_call_limit", "repeats")]
    return [f"{tool_calls:.1f}", f"{tokens:.0f}", str(int(violations)), f"{latency:.2f}", *shares]


def _percent(share: float) -> str:
    return f"{100 * share:.1f}%"
