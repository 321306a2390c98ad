"""Hostile input against every surface of the twin, counted per outcome.

Service calls: random and hostile calls (every service of every domain, fields from the device
manual filled with boundary, out-of-range, non-finite, huge, wrongly typed and nested values;
targets of every kind, unknown ids included) on several generated homes, each sent down one of three
paths: `Home.call_service` (strict), the Home Assistant-lenient `strict=False`, and the agent's
`run_tool` with the call as JSON text, as a model writes it. Each outcome is one of:

- ok: the call succeeded and every state it wrote is valid (`twin.domains.check_entity`);
- error: a typed error (a TwinError, or the tool's error result) and the home exactly unchanged;
- crash: any other exception (or a tool result with the internal_error code);
- partial: an error, but some state changed;
- invalid: success, but a written state is not one the entity can have.

Then a corpus of hostile pyexec snippets, goal conditions and home files (the twin's other ways
in), each run once with its CPU time measured against the limit it states.

    .venv/bin/python bench/fuzz.py                 # 100,000 calls on 6 homes, then the corpus
    .venv/bin/python bench/fuzz.py --calls 5000    # a quick look
"""

from __future__ import annotations

import argparse
import json
import math
import random
import resource
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import track
from rich.table import Table

from twin.conditions import compile_condition
from twin.domains import DOMAINS, check_entity
from twin.errors import TwinError
from twin.home import Home
from twin.homefile import import_ha_snapshot, load_home
from twin.homemaker import make_home
from twin.manual import FIELDS
from twin.pyexec import DEFAULT_LIMITS, run
from twin.tools import run_tool

HOMES = ((11, "studio"), (3, "apartment"), (6, "house"), (21, "duplex"), (8, "villa"), (40, None))
HOSTILE_NUMBERS = (
    math.inf,
    -math.inf,
    math.nan,
    10**400,
    -(10**400),
    2**63,
    -1,
    0,
    1e-320,
    1e308,
    -0.0,
    0.5,
    True,
)
HOSTILE_VALUES = (
    None,
    "",
    "on",
    "1e999",
    "nan",
    "-5",
    "x" * 10_000,
    "\u202e\x00",
    [],
    [1, 2, 3],
    [None],
    {},
    {"a": {"b": [1]}},
    [[[[[[[[[]]]]]]]]],
)
# What the memory cap leaves above the process's size when the corpus starts.
CORPUS_MEMORY = 1024 * 2**20


def main() -> None:
    """Run the fuzz and print the tables."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--calls", type=int, default=100_000, help="service calls in all (default 100,000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="the random stream's seed")
    args = parser.parse_args()
    console = Console()
    outcomes, crashes = fuzz_calls(args.calls, random.Random(args.seed))
    console.print(outcome_table("service calls", outcomes))
    for signature, count in crashes.most_common(20):
        console.print(f"[red]{count:6}  {signature}")
    resource.setrlimit(resource.RLIMIT_AS, (_vm_bytes() + CORPUS_MEMORY,) * 2)
    corpus = corpus_outcomes()
    console.print(corpus_table(corpus))


# --- service calls ------------------------------------------------------------------------------


def fuzz_calls(count: int, rng: random.Random) -> tuple[Counter[str], Counter[str]]:
    """`count` hostile calls spread over HOMES: outcomes by path, crashes by signature."""
    homes = [make_home(seed, home_type) for seed, home_type in HOMES]
    starts = [home.snapshot() for home in homes]
    outcomes: Counter[str] = Counter()
    crashes: Counter[str] = Counter()
    for index in track(range(count), description="service calls", transient=True):
        which = index % len(homes)
        home = homes[which]
        if rng.random() < 0.01:
            home.restore(starts[which])
        path = rng.choice(PATHS)
        domain, service, data, target = hostile_call(home, rng)
        outcome, signature = judged(home, path, domain, service, data, target)
        outcomes[f"{path.__name__}: {outcome}"] += 1
        outcomes[outcome] += 1
        if signature:
            crashes[signature] += 1
    return outcomes, crashes


def hostile_call(home: Home, rng: random.Random) -> tuple[str, str, dict[str, Any], dict[str, Any]]:
    """A call on a random entity: mostly its own domain's services, with fields of the manual."""
    entity_id = rng.choice(list(home.states))
    domain = entity_id.partition(".")[0]
    if rng.random() < 0.05 or domain not in DOMAINS or not DOMAINS[domain].services:
        domain = rng.choice([*DOMAINS, "homeassistant", "nope", ""])
    services = list(DOMAINS[domain].services) if domain in DOMAINS else []
    services = services or ["turn_on", "toggle"]
    service = rng.choice([*services, "bogus"] if rng.random() < 0.05 else services)
    data: dict[str, Any] = {}
    for spec in FIELDS.get((domain, service), ()):
        if spec.required or rng.random() < 0.3:
            data[spec.name] = field_value(spec.accepts, rng)
    if rng.random() < 0.05:
        data[rng.choice(["bogus", "entity_id", "metadata", "brightness"])] = rng.choice(
            HOSTILE_VALUES
        )
    return domain, service, data, hostile_target(home, entity_id, rng)


def field_value(accepts: Any, rng: random.Random) -> Any:
    """A value for a field that accepts `accepts` (the manual's type, range and options)."""
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(HOSTILE_NUMBERS)
    if roll < 0.25:
        return rng.choice(HOSTILE_VALUES)
    if accepts.get("options"):
        return rng.choice(list(accepts["options"]))
    kind = accepts.get("type")
    if kind in ("integer", "number"):
        low, high = accepts.get("min", -1000), accepts.get("max", 10_000)
        value = rng.choice([low, high, low - 1, high + 1, rng.uniform(low, high)])
        return round(value) if kind == "integer" and rng.random() < 0.8 else value
    if kind == "array":
        items = accepts.get("items", {})
        length = accepts.get("length", rng.randint(0, 4))
        if rng.random() < 0.2:
            length = rng.randint(0, 6)
        parts = items if isinstance(items, list) else [items] * length
        return [field_value(part, rng) for part in parts[:length]]
    if kind == "boolean":
        return rng.choice([True, False, "yes", 0, 2])
    return rng.choice(["", "on", "off", "auto", "red", "x" * 300, 7])


def hostile_target(home: Home, entity_id: str, rng: random.Random) -> dict[str, Any]:
    """A target: the entity, several, an area, floor or device, or something malformed."""
    roll = rng.random()
    if roll < 0.6:
        return {"entity_id": entity_id}
    if roll < 0.7:
        return {"entity_id": rng.sample(list(home.states), min(3, len(home.states)))}
    if roll < 0.8 and home.areas:
        return {"area_id": rng.choice([*home.areas, "nowhere"])}
    if roll < 0.85 and home.floors:
        return {"floor_id": rng.choice(list(home.floors))}
    if roll < 0.9 and home.devices:
        return {"device_id": rng.choice(list(home.devices))}
    return {rng.choice(["entity_id", "area_id", "device_id"]): rng.choice([*HOSTILE_VALUES, "all"])}


def strict(home: Home, domain: str, service: str, data: Any, target: Any) -> None:
    """The twin's own API, atomic."""
    home.call_service(domain, service, data, target)


def lenient(home: Home, domain: str, service: str, data: Any, target: Any) -> None:
    """The twin acting entity by entity, as Home Assistant does."""
    home.call_service(domain, service, data, target, strict=False)


def tool(home: Home, domain: str, service: str, data: Any, target: Any) -> None:
    """The agent's tool, with the call as the JSON text a model writes (inf as 1e999)."""
    arguments = {"domain": domain, "service": service, "data": data, "target": target}
    text = json.dumps(arguments).replace("Infinity", "1e999")
    result = run_tool(home, "call_service", text)
    if not result.get("success", True):
        code = result["error"]["code"]
        if code == "internal_error":
            raise RuntimeError(result["error"]["message"])
        raise TwinError(code)


PATHS: tuple[Callable[[Home, str, str, Any, Any], None], ...] = (strict, lenient, tool)


def judged(
    home: Home, path: Callable[..., None], domain: str, service: str, data: Any, target: Any
) -> tuple[str, str]:
    """The outcome of one call, and a crash's signature (its exception and where it was raised)."""
    before = dict(home.states)
    try:
        path(home, domain, service, data, target)
    except TwinError:
        same = home.states.keys() == before.keys() and all(
            home.states[key] is state for key, state in before.items()
        )
        return ("error" if same or path is lenient else "partial"), ""
    except Exception as err:  # a crash is what this counts
        where = traceback.extract_tb(err.__traceback__)[-1]
        return (
            "crash",
            f"{type(err).__name__} at {where.filename.rsplit('/', 1)[-1]}:{where.lineno}",
        )
    for entity_id, state in home.states.items():
        if before.get(entity_id) is not state:
            try:
                check_entity(home.entities[entity_id], state)
            except TwinError as err:
                return "invalid", f"invalid {entity_id}: {err}"
    return "ok", ""


def outcome_table(title: str, outcomes: Counter[str]) -> Table:
    """Counts per outcome, overall and per path."""
    table = Table(title=title)
    table.add_column("outcome")
    table.add_column("calls", justify="right")
    for outcome in ("ok", "error", "crash", "partial", "invalid"):
        table.add_row(outcome, f"{outcomes[outcome]:,}")
    for key in sorted(key for key in outcomes if ": " in key):
        table.add_row(f"  {key}", f"{outcomes[key]:,}")
    return table


# --- the other surfaces -------------------------------------------------------------------------

SNIPPETS = (
    "t='{:99999}'*6000; t.format(*[0]*6000)",
    "('%99999d'*6000) % tuple(range(6000))",
    "'%(a(b)c)600000000s' % {'a(b)c': 1}",
    "('\u4e2d' * 15000).encode('punycode')",
    "x = 7 ** 200000\nfor _ in range(31):\n    y = x // 3 + x % 7",
    "'%(' * 50000 % {}",
    "'x' * 10**9",
    "[0] * 10**9",
    "2 ** 10**9",
    "'a'.zfill(10**9)",
    "'{:>999999999}'.format(1)",
    "while True: pass",
    "def f(): return f()\nf()",
    "s = 'a'\nwhile True: s = s + s",
    "str(10 ** 100000)",
    "int('9' * 100000)",
    "sorted(range(10**8))",
    "'\\t'.expandtabs(10**9)",
    "'ab'.replace('', 'x' * 10**5)",
)


def conditions() -> Iterator[str]:
    """Hostile goal conditions, up to 1 MB each."""
    yield " < ".join(["1"] * 20000)
    yield "9 ** 9 ** 9 > 1"
    yield "(" * 100_000 + "1" + ")" * 100_000 + " == 1"
    yield "not " * 100_000 + "True"
    yield "'" + "x" * 1_000_000 + "' == 'x'"
    yield " and ".join(['state("light.x") == "on"'] * 30_000)
    yield "approx(1e308 * 10, 1, 1)"
    yield "between(num('sensor.a'), -1e999, 1e999)"


def home_files() -> Iterator[str | bytes]:
    """Hostile home files and snapshots, up to 1 MB each."""
    yield b"\xff\xfe name: x"
    yield "name: 2026-02-30\n"
    yield "[" * 50_000
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        bomb.append(f"{'b' * level}: &{'b' * level} [*{'b' * (level - 1) or 'a'}] ")
    yield "\n".join(bomb).replace("[*a]", "[*a, *a, *a, *a, *a, *a, *a, *a, *a]") + "\n"
    yield "\n".join(f"k{index}: {index}" for index in range(30_000)) + "\n"
    yield "name: x\ntime: 9999-12-31T23:59:59Z\n"
    yield json.dumps(
        {
            "states": [
                {"entity_id": "light.x", "state": "on", "attributes": {"supported_features": "abc"}}
            ]
        }
    )


def corpus_outcomes() -> list[tuple[str, str, str, float, float]]:
    """Each corpus item's surface, a short form of it, its outcome, CPU seconds and the limit."""
    rows = []
    home = make_home(11, "studio")
    for snippet in SNIPPETS:
        rows.append(
            _timed("pyexec", snippet, lambda s=snippet: _pyexec(home, s), DEFAULT_LIMITS.seconds)
        )
    for text in conditions():
        rows.append(_timed("condition", text, lambda t=text: compile_condition(t).holds(home), 1.0))
    for document in home_files():
        rows.append(_timed("home file", document, lambda d=document: _load(d), 1.0))
    return rows


def _pyexec(home: Home, snippet: str) -> None:
    outcome = run(snippet, home)
    if not outcome.ok:
        raise _Refused(outcome.error_code or "error")


class _Refused(TwinError):
    """A pyexec run that ended with the sandbox's typed error."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


def _load(document: str | bytes) -> None:
    """Load the document as a user would: a snapshot as a mapping, anything else as a file."""
    if isinstance(document, str) and document.startswith("{") and '"states"' in document:
        import_ha_snapshot(json.loads(document))
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "home.yaml"
        path.write_bytes(document if isinstance(document, bytes) else document.encode())
        load_home(path)


def _timed(
    surface: str, item: Any, action: Callable[[], Any], limit: float
) -> tuple[str, str, str, float, float]:
    started = time.process_time()
    try:
        action()
        outcome = "ok"
    except TwinError as err:
        outcome = f"error ({getattr(err, 'code', 'error')})"
    except MemoryError:
        outcome = "crash (MemoryError)"
    except Exception as err:  # a crash is what this counts
        outcome = f"crash ({type(err).__name__})"
    spent = time.process_time() - started
    shown = repr(item)
    return surface, shown if len(shown) < 50 else shown[:47] + "...", outcome, spent, limit


def corpus_table(rows: list[tuple[str, str, str, float, float]]) -> Table:
    """One row per corpus item; a crash or a run far past its limit is red."""
    table = Table(title="pyexec, conditions and home files")
    for column in ("surface", "input", "outcome", "CPU s", "limit s"):
        table.add_column(column, justify="right" if column.endswith(" s") else "left")
    for surface, shown, outcome, spent, limit in rows:
        bad = outcome.startswith("crash") or spent > 2 * limit
        style = "red" if bad else None
        table.add_row(surface, shown, outcome, f"{spent:.2f}", f"{limit:g}", style=style)
    return table


def _vm_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


if __name__ == "__main__":
    main()
