"""Datasets from the flywheel: trajectories as Hugging Face chat rows for SFT, blueprints for RL,
and a card that counts what they hold.

A trajectory row is `{"messages": [...], "tools": "<JSON>", <metadata>}`, the conversational
language-modelling format TRL's SFTTrainer takes as is (`assistant_only_loss` included, with a
template that marks generations). Two choices keep one Arrow schema across rows, so JSONL and
Parquet load alike with `datasets.load_dataset`: tool-call `arguments` are JSON text, as in the
OpenAI format (chat templates print a string as it is and a dict with `tojson`, the same text),
and `tools` is JSON text, which SFTTrainer parses itself (`json.loads` when it is a string).
Every message has the same keys, role, content, tool_calls and name (None where they do not
apply; no call ids, which only pair calls with results), so that `datasets` reads JSONL as the
same struct as Parquet rather than as untyped JSON.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from twin.atomic import replacing, write_text
from twin.tools import TOOL_SCHEMAS

from ..episode import Trajectory
from ..errors import AgentError
from ..policies import Message
from . import language, mcts
from .blueprints import FILTERS, TASK_TYPES, Blueprint, Rejected, make_blueprint
from .paraphrase import LLMParaphraser, UnfaithfulParaphrase

Row = dict[str, Any]
TOOLS_JSON = json.dumps(list(TOOL_SCHEMAS), ensure_ascii=False)
QUERY_AXES = ("clarity", "tone", "dependency", "devices", "phenomenon", "memory")


class DatasetError(AgentError, ValueError):
    """A dataset directory or file that cannot be read."""


# --- rows -----------------------------------------------------------------------------------------


def chat_messages(messages: Iterable[Message]) -> list[Message]:
    """OpenAI-format messages as Hugging Face chat messages (see the module's docstring)."""
    out: list[Message] = []
    for message in messages:
        calls = [
            {
                "type": "function",
                "function": {
                    "name": call["function"]["name"],
                    "arguments": _json_text(call["function"]["arguments"]),
                },
            }
            for call in message.get("tool_calls") or ()
        ]
        out.append(
            {
                "role": message["role"],
                "content": message.get("content") or "",
                "tool_calls": calls or None,
                "name": message.get("name") if message["role"] == "tool" else None,
            }
        )
    return out


def blueprint_columns(blueprint: Blueprint) -> Row:
    """The columns that place a blueprint: its seed, query type (and task type) and the domains
    it acts on."""
    qtype = blueprint.query_type
    return {
        "seed": blueprint.seed,
        "query_type": qtype.label,
        "task_type": qtype.task_type,
        **{axis: getattr(qtype, axis) for axis in QUERY_AXES},
        "domains": sorted({intent.domain for intent in blueprint.task.intents}),
        "intents": len(blueprint.task.intents),
        "home_type": blueprint.home_type,
        "language": blueprint.language,
    }


def trajectory_row(trajectory: Trajectory, blueprint: Blueprint, method: str, index: int) -> Row:
    """One SFT row: the dialogue and tools, and where it came from."""
    return {
        "id": f"{blueprint.seed}-{method}-{index}",
        "messages": chat_messages(trajectory.messages),
        "tools": TOOLS_JSON,
        "method": method,
        **blueprint_columns(blueprint),
        "reward": trajectory.reward,
        "done": trajectory.done,
        "turns": trajectory.turns,
        "tool_calls": trajectory.tool_calls,
        "tool_names": [step.name for step in trajectory.steps],
        "hidden": [i.entity_id for i in blueprint.task.intents if i.clarify == "entity"],
    }


def blueprint_row(blueprint: Blueprint) -> Row:
    """One RL row: the whole blueprint as JSON text (Blueprint.from_json reads it back)."""
    return {"id": f"{blueprint.seed}-blueprint", "method": "blueprint"} | {
        **blueprint_columns(blueprint),
        "blueprint": blueprint.to_json(),
    }


# --- files ----------------------------------------------------------------------------------------


def write_dataset(directory: Path, name: str, rows: Sequence[Row]) -> list[Path]:
    """Write `name`.jsonl and, where pyarrow is installed, `name`.parquet; each atomically."""
    directory.mkdir(parents=True, exist_ok=True)
    jsonl = directory / f"{name}.jsonl"
    write_text(jsonl, _lines(rows))
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:
        return [jsonl]
    parquet = directory / f"{name}.parquet"
    with replacing(parquet) as temporary:
        pq.write_table(pa.Table.from_pylist(list(rows)), temporary)
    return [jsonl, parquet]


def read_rows(path: Path) -> list[Row]:
    """The rows of a JSONL file written by `write_dataset`."""
    try:
        with path.open(encoding="utf-8") as file:
            return [json.loads(line) for line in file if line.strip()]
    except (OSError, json.JSONDecodeError) as err:
        raise DatasetError(f"Cannot read {path}: {err}") from err


def dataset_file(directory: Path) -> Path:
    """The JSONL rows file in a dataset directory."""
    found = sorted(directory.glob("*.jsonl"))
    if len(found) != 1:
        raise DatasetError(
            f"{directory} holds {len(found)} .jsonl files; expected one dataset, as written "
            "by `homeflow data blueprints` or `homeflow data synthesize`"
        )
    return found[0]


# --- the work per seed (runner.Work: module-level, JSON-able records) ------------------------


def blueprint_record(
    job: int | list[Any], error_rate: float, paraphrase: str | None = None
) -> dict[str, Any]:
    """The blueprint of a seed (`job`: the seed, or [seed, language]) as a row, or which filter
    rejected it; with `paraphrase` (an `openai:URL#MODEL` spec) the request is rewritten by that
    server, sampled by the seed, and a paraphrase that drops a number rejects the seed as
    "paraphrase"."""
    seed, language = (job, "en") if isinstance(job, int) else (int(job[0]), str(job[1]))
    rewrite = LLMParaphraser(paraphrase, seed=seed) if paraphrase is not None else None
    try:
        blueprint = make_blueprint(
            seed, error_rate=error_rate, paraphrase=rewrite, language=language
        )
    except UnfaithfulParaphrase as err:
        return {
            "seed": seed,
            "rows": [],
            "rejected": "paraphrase",
            "check": "dropped_number",
            "reason": str(err),
        }
    if isinstance(blueprint, Rejected):
        return {"seed": seed, "rows": [], "rejected": blueprint.filter, "check": blueprint.check}
    return {"seed": seed, "rows": [blueprint_row(blueprint)], "rejected": None}


def synthesis_record(
    job: int | str,
    method: str,
    error_rate: float,
    teacher: str = mcts.SCRIPTED,
    user: str = mcts.SCRIPTED,
    mistake_rate: float = 0.0,
) -> dict[str, Any]:
    """The trajectories of one blueprint (a seed to make it from, or its JSON) by `method` of
    agent.flywheel.mcts as rows (verified ones; role-play's one rollout with its post-hoc
    verdict in `done`), with what they cost; `teacher`, `user` and `mistake_rate` are
    SynthesisConfig's."""
    if isinstance(job, str):
        blueprint: Blueprint | Rejected = Blueprint.from_json(job)
    else:
        blueprint = make_blueprint(job, error_rate=error_rate)
    if isinstance(blueprint, Rejected):
        return {"seed": blueprint.seed, "rows": [], "rejected": blueprint.filter}
    config = mcts.SynthesisConfig(
        method=method, error_rate=error_rate, teacher=teacher, user=user, mistake_rate=mistake_rate
    )
    synthesis = mcts.synthesize_sync(blueprint, config)
    rows = [trajectory_row(t, blueprint, method, i) for i, t in enumerate(synthesis.trajectories)]
    costs = ("policy_calls", "user_calls", "rollouts", "prefix_reuses", "rollouts_saved")
    cost = {name: getattr(synthesis, name) for name in (*costs, "success")}
    return {"seed": blueprint.seed, "rows": rows, "rejected": None, **cost}


# --- counts and the card ------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """One table of counts: a title and (label, value) rows."""

    title: str
    rows: list[tuple[str, str]]


def summarise(rows: Sequence[Row], records: Sequence[Mapping[str, Any]] = ()) -> list[Section]:
    """What a dataset holds: rows, blueprints, and their spread by method, query type, task
    type, domain and tool calls; how varied its users' words are (language); how trajectories
    recover from failed calls; with the run's `records`, the share of seeds each stage
    rejected."""
    seeds = {row["seed"] for row in rows}
    sections = [Section("size", [("rows", str(len(rows))), ("blueprints", str(len(seeds)))])]
    if methods := [row["method"] for row in rows if "method" in row]:  # not a benchmark's
        sections.append(Section("by method", _counts(methods)))
    sections += [
        Section(f"by {axis}", _counts(str(row[axis]).lower() for row in rows))
        for axis in QUERY_AXES
    ]
    sections.append(Section("by query type (top 10)", _counts((r["query_type"] for r in rows), 10)))
    if rows and all("task_type" in row for row in rows):  # rows written before it have none
        kinds = Counter(row["task_type"] for row in rows)
        shown = [(k, f"{kinds[k]} ({100 * kinds[k] / len(rows):.1f}%)") for k in TASK_TYPES]
        sections.append(Section("by task type", shown))
    domains = (d for row in rows for d in row["domains"])
    sections.append(Section("by domain (share of rows)", _counts(domains, total=len(rows))))
    calls = [row["tool_calls"] for row in rows if "tool_calls" in row]
    if calls:
        spread = [
            ("mean", f"{statistics.mean(calls):.2f}"),
            ("min", str(min(calls))),
            ("median", f"{statistics.median(calls):g}"),
            ("max", str(max(calls))),
        ]
        sections.append(Section("tool calls per trajectory", spread))
    spoken = [str(row.get("language", "en")) for row in rows]  # v1's rows name none: English
    if len(set(spoken)) > 1:
        sections.append(Section("by language", _counts(spoken)))
    for code in sorted(set(spoken), key=lambda c: (c != "en", c)):
        said = language.measures([row for row, c in zip(rows, spoken, strict=True) if c == code])
        if said:
            title = "language (first user turns)" if code == "en" else f"language {code}"
            sections.append(Section(title, said))
    if asked := [row for row in rows if row.get("hidden")]:
        leaks = sum(map(reads_hidden, asked))
        shown = [
            ("ambiguous trajectories", str(len(asked))),
            ("hidden target read first", str(leaks)),
        ]
        sections.append(Section("teacher leaks", shown))
    if dialogues := [row["messages"] for row in rows if "messages" in row]:
        failed = [messages for messages in dialogues if _failed_calls(messages)]
        shown = [
            ("trajectories with a failed call", str(len(failed))),
            ("that recover (not repeating the failed call)", str(sum(map(recovers, failed)))),
            ("that repeat an identical call", str(sum(map(repeats_call, dialogues)))),
        ]
        sections.append(Section("recovery", shown))
    if records:
        sections.append(Section("seeds", _outcomes(records)))
    return sections


def recovers(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a dialogue has a failed tool call and the agent never makes a failed call again
    after its failure (it corrects the call or does something else): what data should teach."""
    failed = _failed_calls(messages)
    return bool(failed) and not any(
        key in failed and index > failed[key] for index, key in _calls(messages)
    )


def repeats_call(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the agent makes an identical call (name and arguments) twice with no user message
    between: the loop small models fall into."""
    seen: set[str] = set()
    for message in messages:
        if message.get("role") == "user":
            seen.clear()
        for call in message.get("tool_calls") or ():
            if (key := _call_key(call)) in seen:
                return True
            seen.add(key)
    return False


def _calls(messages: Sequence[Mapping[str, Any]]) -> list[tuple[int, str]]:
    """Each tool call's message index and key (its name and arguments)."""
    return [
        (index, _call_key(call))
        for index, message in enumerate(messages)
        for call in message.get("tool_calls") or ()
    ]


def _failed_calls(messages: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The calls whose tool result says `"success": false`, each with the index of the first
    failed result; results answer the latest assistant message's calls in order."""
    pending: list[str] = []
    failed: dict[str, int] = {}
    for index, message in enumerate(messages):
        if message.get("tool_calls"):
            pending = [_call_key(call) for call in message["tool_calls"]]
        elif message.get("role") == "tool" and pending:
            key = pending.pop(0)
            if _failed(message.get("content") or ""):
                failed.setdefault(key, index)
    return failed


def _failed(content: str) -> bool:
    try:
        result = json.loads(content)
    except json.JSONDecodeError:
        return False
    return isinstance(result, dict) and result.get("success") is False


def _call_key(call: Mapping[str, Any]) -> str:
    function = call.get("function") or {}
    return f"{function.get('name')}({_json_text(function.get('arguments', ''))})"


def reads_hidden(row: Mapping[str, Any]) -> bool:
    """Whether a trajectory's agent named the hidden target of an ambiguous request (`hidden`)
    in a tool call before the user named it (in their answer, the second user message): a
    teacher that guesses from what it should not know."""
    hidden, users = set(row.get("hidden") or ()), 0
    for message in row["messages"]:
        users += message.get("role") == "user"
        if users > 1:
            return False
        for call in message.get("tool_calls") or ():
            arguments = str(call.get("function", {}).get("arguments", ""))
            if any(_names(entity_id, arguments) for entity_id in hidden):
                return True
    return False


def _names(entity_id: str, text: str) -> bool:
    """Whether `text` (a call's arguments, pyexec code too) holds the entity id as a whole
    (not "light.lamp" in "light.lamp_2")."""
    return re.search(rf"(?<![\w.]){re.escape(entity_id)}(?!\w)", text) is not None


def _outcomes(records: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """How each seed ended: kept, or rejected by a filter, or not solved by the synthesis."""
    outcome = Counter(
        record.get("rejected") or ("kept" if record["rows"] else "no verified trajectory")
        for record in records
    )
    order = ["kept", "paraphrase", *FILTERS, "scene", "no verified trajectory"]
    total = len(records)
    return [("seeds", str(total))] + [
        (name, f"{outcome[name]} ({100 * outcome[name] / total:.1f}%)")
        for name in order
        if name in outcome or name in FILTERS
    ]


def card(title: str, files: Sequence[Path], sections: Sequence[Section], about: str) -> str:
    """A dataset card (README.md): front matter so `load_dataset(directory)` finds the data,
    what it is and how to load it, and the counts."""
    data = next((f for f in files if f.suffix == ".parquet"), files[0])
    lines = [
        "---",
        "configs:",
        "- config_name: default",
        f"  data_files: {data.name}",
        "tags: [synthetic, tool-calling, smart-home, homeflow]",
        "---",
        "",
        f"# {title}",
        "",
        about,
        "",
        "Files: " + ", ".join(f"`{f.name}`" for f in files) + ". Load with",
        f'`datasets.load_dataset("json", data_files="{files[0].name}")` or '
        f'`datasets.load_dataset("parquet", data_files="{data.name}")`.',
    ]
    for section in sections:
        lines += ["", f"## {section.title.capitalize()}", "", "| | |", "|---|---:|"]
        lines += [f"| {label} | {value} |" for label, value in section.rows]
    return "\n".join(lines) + "\n"


def _counts(
    values: Iterable[str], top: int | None = None, total: int | None = None
) -> list[tuple[str, str]]:
    counts = Counter(values)
    total = total or sum(counts.values())
    return [(k, f"{n} ({100 * n / total:.1f}%)") for k, n in counts.most_common(top)]


def _json_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def _lines(rows: Iterable[Row]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
