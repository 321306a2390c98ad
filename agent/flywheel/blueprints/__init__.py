"""Blueprints (paper B.1.2): a profile, a home in its initial state, scenes of the user's life in
it, and the user's request with its ground truth (a Task of atomic intents and their conditions,
or for a status question or an impossible request what the reply must state: questions.py).

`make_blueprint(seed)` drafts one candidate with the offline scripter (scripter.py), checks it
against the home with the triple filter (filters.py: executability, boundary validity, logical
consistency) and returns the blueprint (model.py) or why it was refused (`Rejected`); `generate`
does so over many seeds and counts the refusals (pipeline.py). Training and SmartHome-Bench draw
from apart seeds (split.py).
"""

from .filters import FILTERS, profile_conflicts, triple_filter
from .model import (
    CLARITIES,
    PHENOMENA,
    REQUEST_TYPES,
    REQUESTS,
    TASK_TYPES,
    TONES,
    Blueprint,
    BlueprintError,
    Candidate,
    QueryType,
    Rejected,
)
from .pipeline import Generation, generate, make_blueprint
from .scripter import VALUE_WORDS, Draft, Paraphrase, draft
from .split import BENCH_SEEDS, SplitError, check_split

__all__ = [
    "BENCH_SEEDS",
    "CLARITIES",
    "FILTERS",
    "PHENOMENA",
    "REQUESTS",
    "REQUEST_TYPES",
    "TASK_TYPES",
    "TONES",
    "VALUE_WORDS",
    "Blueprint",
    "BlueprintError",
    "Candidate",
    "Draft",
    "Generation",
    "Paraphrase",
    "QueryType",
    "Rejected",
    "SplitError",
    "check_split",
    "draft",
    "generate",
    "make_blueprint",
    "profile_conflicts",
    "triple_filter",
]
