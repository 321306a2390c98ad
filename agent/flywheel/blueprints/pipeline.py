"""From seeds to blueprints: a seed's draft through the triple filter, and many seeds counted."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..sentences import Share
from .filters import FILTERS, triple_filter
from .model import Blueprint, Rejected
from .scripter import Paraphrase, draft


@dataclass(slots=True)
class Generation:
    """The outcome of generating over many seeds."""

    blueprints: list[Blueprint] = field(default_factory=list)
    rejected: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FILTERS, 0))
    checks: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def candidates(self) -> int:
        """Candidates scripted in all."""
        return len(self.blueprints) + sum(self.rejected.values())

    def shares(self) -> dict[str, float]:
        """The share of candidates each filter rejected."""
        return {name: count / max(1, self.candidates) for name, count in self.rejected.items()}

    @property
    def rate(self) -> float:
        """Accepted blueprints per second."""
        return len(self.blueprints) / self.seconds if self.seconds else 0.0


def make_blueprint(
    seed: int,
    *,
    error_rate: float = 0.2,
    paraphrase: Paraphrase | None = None,
    bench: bool = False,
    language: str = "en",
    share: Share = "flywheel",
) -> Blueprint | Rejected:
    """The blueprint of `seed` (the same seed, the same blueprint), or why its candidate was
    refused. `paraphrase`, e.g. an LLM, rewrites the request (not the answers) when given;
    `bench`, `language` and `share` as for `draft`."""
    drafted = draft(
        seed,
        error_rate=error_rate,
        paraphrase=paraphrase,
        bench=bench,
        language=language,
        share=share,
    )
    if isinstance(drafted, Rejected):
        return drafted
    task = triple_filter(seed, drafted.home, drafted.profile, drafted.candidate)
    if isinstance(task, Rejected):
        return task
    return Blueprint(
        seed,
        drafted.profile,
        seed,
        drafted.home_type,
        drafted.scenes,
        drafted.query_type,
        task,
        drafted.memory,
        drafted.language,
        drafted.share,
        drafted.templates,
    )


def generate(seeds: Sequence[int] | range, *, error_rate: float = 0.2) -> Generation:
    """Blueprints for `seeds`, with the rejections counted per filter and check."""
    out = Generation()
    started = time.perf_counter()
    for seed in seeds:
        result = make_blueprint(seed, error_rate=error_rate)
        if isinstance(result, Rejected):
            out.rejected[result.filter] = out.rejected.get(result.filter, 0) + 1
            out.checks[result.check] = out.checks.get(result.check, 0) + 1
        else:
            out.blueprints.append(result)
    out.seconds = time.perf_counter() - started
    return out
