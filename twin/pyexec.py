"""The pyexec sandbox: runs agent-written Python against a Home, safely and all-or-nothing.

The code sees this API and nothing else of the host:

    call_service(domain, service, data=None, target=None, **fields) -> None
        Call a Home Assistant action. Keyword `fields` are target keys (entity_id, device_id,
        area_id, floor_id, label_id) or service data; a key may be given only once. E.g.
        call_service("switch", "turn_on", entity_id="switch.kettle")
        call_service("light", "turn_on", {"brightness": 100}, {"area_id": "kitchen"})
    state(entity_id) -> str                 the entity's state
    attr(entity_id, name) -> value | None   one state attribute, None when the entity lacks it
    entity(entity_id) -> EntityView         .entity_id, .state, .domain, .attributes, .<attribute>
    list_entities(domain=None, area=None) -> list[str]   sorted entity ids
    print(*values, sep=" ", end="\\n")      output is kept up to `Limits.output` characters

plus the builtins len, range, min, max, sum, abs, round, sorted, reversed, enumerate, zip, map,
filter, any, all, int, float, str, bool, list, dict, tuple and set (str, range, min, max, sum,
round, sorted, zip, map and filter are checked functions, not the types; zip and map take at most
MAX_ITERABLES iterables). Functions and lambdas may be defined: with the rules below a lambda can
do nothing a def cannot. An unknown entity, a refused call or any other error stops the code.

Safety comes in three layers:
1. Validation, before anything runs: `import`, `class`, `try`, `with`, `global`, `nonlocal`,
   `async`, `yield`, `match`, names and attributes starting with `_` (a bare `_` name is allowed),
   frame and code introspection attributes (`gi_frame`, `f_globals`...), attribute and slice
   assignment, and the names in FORBIDDEN_NAMES are refused; such code is not run, and the result
   lists the constructs found (`ExecResult.restricted`).
2. Instrumentation: the syntax tree is rewritten so that a step is counted at every loop
   iteration, comprehension item, call (also the calls that builtins make: map's function, sort
   keys) and operation that can copy a sequence (slices, unpacking, most binary operators); every
   CHECK_EVERY steps the wall time and the process's memory are checked. Each operation that can
   build a large object in one C call (sequence repetition and concatenation, int power, shift
   and product, padding, joining, replacing, formatting, `range`, `list.extend`, `str()` of
   containers) checks the size first. Try statements are refused and the limit errors derive
   from BaseException, so code can never swallow them.
3. Atomicity: the home is saved before the first service call and restored when the code fails.

What in-process checks cannot stop: one C-level comparison or hash of two deeply self-similar
structures (say, two separately built 40-level `x = [x, x]` lists) runs to completion before the
next check. Run code from untrusted humans in a worker process with a hard timeout as well.
"""

from __future__ import annotations

import ast
import functools
import os
import re
import string
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import CodeType, MappingProxyType
from typing import TYPE_CHECKING, Any

from .errors import (
    EntityNotFoundError,
    InvalidServiceDataError,
    ServiceNotFoundError,
    TargetNotFoundError,
    TwinError,
)
from .state import State
from .validation import TARGET_KEYS

if sys.platform != "win32":
    import resource

if TYPE_CHECKING:
    from .auditor import Policy
    from .home import Home, Snapshot

FILENAME = "<snippet>"
CHECK_EVERY = 32  # steps between checks of the wall time and the memory
MAX_ITERABLES = 32  # zip(*many) builds len(many)-tuples in C, without counting steps

FORBIDDEN_NAMES = frozenset(
    {
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "eval",
        "exec",
        "compile",
        "open",
        "globals",
        "locals",
        "vars",
        "type",
        "isinstance",
        "issubclass",
        "breakpoint",
        "input",
        "help",
        "memoryview",
        "classmethod",
        "staticmethod",
        "super",
        "object",
    }
)
# Attributes that reach the host (format_map), or build huge objects (to_bytes, translate).
FORBIDDEN_ATTRIBUTES = frozenset({"format_map", "translate", "maketrans", "to_bytes", "mro"})
# Generator, coroutine, frame, traceback and code attributes lead to the host's frames and globals.
INTROSPECTION_PREFIXES = ("gi_", "cr_", "ag_", "f_", "tb_", "co_")
REFUSED_NODES: Mapping[type[ast.AST], str] = MappingProxyType(
    {
        ast.Import: "import",
        ast.ImportFrom: "import",
        ast.ClassDef: "class",
        ast.Try: "try",
        ast.TryStar: "try",
        ast.With: "with",
        ast.Global: "global",
        ast.Nonlocal: "nonlocal",
        ast.AsyncFunctionDef: "async",
        ast.AsyncFor: "async",
        ast.AsyncWith: "async",
        ast.Await: "async",
        ast.Yield: "yield",
        ast.YieldFrom: "yield",
        ast.Match: "match",
        # Syntax of newer Pythons that the sandbox has no use for.
        **{
            getattr(ast, name): label
            for name, label in (("TypeAlias", "type"), ("TemplateStr", "template string"))
            if hasattr(ast, name)
        },
    }
)
RULES = (
    "The sandbox allows no import, class, try, with, global, nonlocal, async, yield or match; "
    "no names or attributes starting with '_'; no attribute or slice assignment; "
    "no getattr, eval, exec, open, type, isinstance or the like"
)
# Methods of str, bytes and list that run through a size check (or count their key's calls).
GUARDED_METHODS = frozenset(
    {
        "format",
        "join",
        "replace",
        "center",
        "ljust",
        "rjust",
        "zfill",
        "expandtabs",
        "extend",
        "sort",
    }
)
_BINARY_HOOKS = {
    ast.Add: "_add",
    ast.Mult: "_mul",
    ast.Pow: "_pow",
    ast.LShift: "_lshift",
    ast.Mod: "_mod",
}
_INPLACE_HOOKS = {**_BINARY_HOOKS, ast.Add: "_iadd", ast.Mult: "_imul"}

_SEQUENCES = (str, bytes, list, tuple)
_CONTAINERS = (list, tuple, set, frozenset)
_MAPPINGS = (dict, MappingProxyType)
_ATOMS = (str, bytes, int, float, bool, type(None))
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
_DIGITS = re.compile(r"\d+")
_FORMATTER = string.Formatter()
_STATM = "/proc/self/statm"
_HAS_STATM = os.path.exists(_STATM)
_PAGE = os.sysconf("SC_PAGE_SIZE") if _HAS_STATM else 1
_RSS_UNIT = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is in bytes on macOS, else KiB


class SandboxLimitError(BaseException):
    """Code went over a sandbox limit. A BaseException, so that code could never catch it."""

    code = "limit"


class StepLimitError(SandboxLimitError):
    """Too many loop iterations and calls."""

    code = "step_limit"


class TimeLimitError(SandboxLimitError):
    """The code ran longer than its wall-time limit."""

    code = "time_limit"


class MemoryLimitError(SandboxLimitError):
    """An operation would build too large an object, or the process grew too much."""

    code = "memory_limit"


@dataclass(frozen=True, slots=True)
class Limits:
    """What one run may use. `size` caps what one operation builds: characters of a string,
    items of a sequence, bits of an int. `memory` caps how much the process's resident memory
    may grow while the code runs (None: unchecked); other threads' allocations count too."""

    steps: int = 100_000
    seconds: float = 1.0
    size: int = 100_000
    memory: int | None = 256 * 2**20
    output: int = 10_000
    code: int = 20_000


DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class ServiceCall:
    """One call_service the code made, with its data and target split as the home takes them."""

    domain: str
    service: str
    data: dict[str, Any]
    target: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ExecResult:
    """What a run did. When `error` is set, none of `calls` took effect.

    `error` names the exception type, its message and the code's line; `error_code` is a TwinError
    code, an auditor code, or one of restricted_code, syntax_error, code_error, step_limit,
    time_limit and memory_limit. `restricted` lists the forbidden constructs of code that was
    refused without running.
    """

    output: str = ""
    error: str | None = None
    error_code: str | None = None
    calls: tuple[ServiceCall, ...] = ()
    restricted: tuple[str, ...] = ()
    steps: int = 0

    @property
    def ok(self) -> bool:
        """Whether the code ran to its end."""
        return self.error is None


class EntityView:
    """A read-only view of an entity's state as it was when `entity()` was called."""

    __slots__ = ("_state",)

    def __init__(self, state: State) -> None:
        self._state = state

    @property
    def entity_id(self) -> str:
        """The entity's id."""
        return self._state.entity_id

    @property
    def state(self) -> str:
        """The entity's state string."""
        return self._state.state

    @property
    def domain(self) -> str:
        """The entity's domain."""
        return self._state.domain

    @property
    def attributes(self) -> Mapping[str, Any]:
        """A read-only copy of the state attributes."""
        return MappingProxyType(_detached(self._state.attributes))

    def __getattr__(self, name: str) -> Any:
        """A state attribute by name, e.g. `.brightness`."""
        attributes = self._state.attributes
        if name.startswith("_") or name not in attributes:
            known = ", ".join(attributes) or "none"
            raise AttributeError(f"{self.entity_id} has no attribute {name!r}; it has: {known}")
        return _detached(attributes[name])

    def __repr__(self) -> str:
        return f"<entity {self.entity_id}: {self.state}>"


def run(
    code: str, home: Home, limits: Limits = DEFAULT_LIMITS, auditor: Policy | None = None
) -> ExecResult:
    """Run `code` against `home`; on any error the home is left exactly as before.

    With an `auditor`, each call_service is first screened by its policy, and a refused one stops
    the code with the auditor's feedback code.
    """
    if len(code) > limits.code:
        message = f"The code has {len(code)} characters; the sandbox runs at most {limits.code}"
        return ExecResult(error=message, error_code="code_error")
    program = _compile(code)
    if program.code is None:
        return ExecResult(
            error=program.error, error_code=program.error_code, restricted=program.restricted
        )
    runner = _Run(home, limits, auditor)
    namespace = runner.namespace()
    try:
        exec(program.code, namespace)
    except BaseException as err:
        if runner.saved is not None:
            home.restore(runner.saved)
        if not isinstance(err, SandboxLimitError | Exception):
            raise  # KeyboardInterrupt and the like belong to the host
        return runner.result(err)
    finally:
        namespace.clear()  # the code's functions hold their globals: free them now
    return runner.result(None)


# --- validation and instrumentation --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Program:
    """A snippet compiled once: its instrumented code, or why it cannot run."""

    code: CodeType | None
    restricted: tuple[str, ...] = ()
    error: str | None = None
    error_code: str | None = None


@functools.lru_cache(maxsize=1024)
def _compile(source: str) -> _Program:
    try:
        tree = ast.parse(source, FILENAME)
        found = sorted(_restricted(tree), key=lambda item: item[1])
        if found:
            labels = tuple(dict.fromkeys(label for label, _ in found))
            places = ", ".join(f"{label} (line {line})" for label, line in found)
            message = f"Restricted code, not run: {places}. {RULES}"
            return _Program(None, labels, message, "restricted_code")
        tree = ast.fix_missing_locations(_Instrument().visit(tree))
        return _Program(compile(tree, FILENAME, "exec"))
    except SyntaxError as err:
        message = f"SyntaxError: {err.msg} (line {err.lineno})"
        return _Program(None, error=message, error_code="syntax_error")
    except (ValueError, RecursionError, MemoryError) as err:
        message = f"{type(err).__name__}: the code cannot be compiled: {err}"
        return _Program(None, error=message, error_code="syntax_error")


def restricted(source: str) -> list[str]:
    """The constructs of `source` the sandbox refuses (getattr, eval, exec, compile, dunders...),
    for a reward that penalises them (RL's CodeCheck); none for code that does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    return [label for label, _ in _restricted(tree)]


def _restricted(tree: ast.AST) -> list[tuple[str, int]]:
    """Every forbidden construct of the tree, with its line."""
    found = []
    for node in ast.walk(tree):
        label = _refusal(node)
        if label is not None:
            found.append((label, getattr(node, "lineno", 0)))
    return found


def _refusal(node: ast.AST) -> str | None:
    """What is forbidden about a node, or None."""
    refused = REFUSED_NODES.get(type(node))
    if refused is not None:
        return refused
    if isinstance(node, ast.Name):
        return _refused_name(node.id)
    if isinstance(node, ast.arg):
        return _refused_name(node.arg)
    if isinstance(node, ast.FunctionDef):
        return _refused_name(node.name)
    if isinstance(node, ast.keyword) and node.arg is not None and node.arg.startswith("_"):
        return node.arg
    if isinstance(node, ast.Attribute):
        if not isinstance(node.ctx, ast.Load):
            return "attribute assignment"
        name = node.attr
        if name.startswith(("_", *INTROSPECTION_PREFIXES)) or name in FORBIDDEN_ATTRIBUTES:
            return name
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.slice, ast.Slice)
    ):
        return "slice assignment"
    return None


def _refused_name(name: str) -> str | None:
    if (name.startswith("_") and name != "_") or name in FORBIDDEN_NAMES:
        return name
    return None


class _Instrument(ast.NodeTransformer):
    """Counts a step at every loop iteration, comprehension item, call and operation that can
    copy or build something big, and routes the operations that can build huge objects in one
    C call through size checks."""

    def __init__(self) -> None:
        self.temporaries = 0

    def visit_For(self, node: ast.For) -> ast.For:
        self.generic_visit(node)
        node.body.insert(0, ast.Expr(_call("_tick", [])))
        return node

    def visit_While(self, node: ast.While) -> ast.While:
        self.generic_visit(node)
        node.body.insert(0, ast.Expr(_call("_tick", [])))
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.comprehension:
        self.generic_visit(node)
        node.ifs.insert(0, _call("_tick", []))
        return node

    def visit_Call(self, node: ast.Call) -> ast.Call:
        self.generic_visit(node)
        node.func = _step(node.func)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.Subscript:
        self.generic_visit(node)
        if isinstance(node.slice, ast.Slice) and isinstance(node.ctx, ast.Load):
            node.value = _step(node.value)
        return node

    def visit_Starred(self, node: ast.Starred) -> ast.Starred:
        self.generic_visit(node)
        if isinstance(node.ctx, ast.Load):
            node.value = _step(node.value)
        return node

    def visit_Dict(self, node: ast.Dict) -> ast.Dict:
        self.generic_visit(node)
        node.values = [
            _step(value) if key is None else value
            for key, value in zip(node.keys, node.values, strict=True)
        ]
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if _is_small(node.op, node.left, node.right):
            return node
        hook = _BINARY_HOOKS.get(type(node.op))
        if hook is None:
            node.left = _step(node.left)
            return node
        return ast.copy_location(_call(hook, [_step(node.left), node.right]), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.stmt | list[ast.stmt]:
        self.generic_visit(node)
        target = node.target
        if _is_small(node.op, target, node.value):
            return node
        value = _step(node.value)
        hook = _INPLACE_HOOKS.get(type(node.op))
        if hook is None:
            node.value = value
            return node
        if isinstance(target, ast.Name):
            update = _call(hook, [ast.Name(target.id, ast.Load()), value])
            return ast.copy_location(ast.Assign([target], update), node)
        # A subscript (attribute targets are refused): evaluate its container and key once.
        assert isinstance(target, ast.Subscript)
        container, key = self._temporary(), self._temporary()

        def item(context: ast.expr_context) -> ast.Subscript:
            return ast.Subscript(
                ast.Name(container, ast.Load()), ast.Name(key, ast.Load()), context
            )

        statements: list[ast.stmt] = [
            ast.Assign([ast.Name(container, ast.Store())], target.value),
            ast.Assign([ast.Name(key, ast.Store())], target.slice),
            ast.Assign([item(ast.Store())], _call(hook, [item(ast.Load()), value])),
        ]
        return [ast.copy_location(statement, node) for statement in statements]

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        self.generic_visit(node)
        if node.attr in GUARDED_METHODS and isinstance(node.ctx, ast.Load):
            return ast.copy_location(_call("_method", [node.value, ast.Constant(node.attr)]), node)
        return node

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.Call:
        # Only inside a JoinedStr, which visit_JoinedStr turns into a call in its turn.
        self.generic_visit(node)
        spec = node.format_spec or ast.Constant("")
        return _call("_format_value", [_step(node.value), ast.Constant(node.conversion), spec])

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.Call:
        self.generic_visit(node)
        return ast.copy_location(_call("_join_text", list(node.values)), node)

    def _temporary(self) -> str:
        self.temporaries += 1
        return f"_t{self.temporaries}"


def _call(hook: str, args: list[ast.expr]) -> ast.Call:
    return ast.Call(ast.Name(hook, ast.Load()), args, [])


def _step(node: ast.expr) -> ast.expr:
    """`_tick() and node`: counts a step, then evaluates to `node` (the hook returns True)."""
    return ast.BoolOp(ast.And(), [_call("_tick", []), node])


def _is_small(op: ast.operator, left: ast.expr, right: ast.expr) -> bool:
    """`i + 1`, `n -= 1`, `x / 2`: with a number, only *, **, << and % can build big things."""
    numbers = (int, float)
    return not isinstance(op, ast.Mult | ast.Pow | ast.LShift | ast.Mod) and any(
        isinstance(side, ast.Constant) and type(side.value) in numbers for side in (left, right)
    )


# --- running -------------------------------------------------------------------------------------


class _Run:
    """One run of a snippet: its budget, the API it sees, its output and its service calls."""

    def __init__(self, home: Home, limits: Limits, auditor: Policy | None) -> None:
        self.home = home
        self.limits = limits
        self.auditor = auditor
        self.steps = 0
        self.next_check = min(CHECK_EVERY, limits.steps + 1)
        self.deadline = time.perf_counter() + limits.seconds
        self.memory_start = _memory() if limits.memory is not None else 0
        self.output: list[str] = []
        self.printed = 0
        self.calls: list[ServiceCall] = []
        self.saved: Snapshot | None = None
        self.guards = _Guards(limits.size, self.tick)

    def namespace(self) -> dict[str, Any]:
        """The code's globals: the API and the hooks; builtins are the guarded safe ones."""
        return {
            "__builtins__": self.guards.builtins,
            "_tick": self.tick,
            "call_service": self.call_service,
            "state": self.state,
            "attr": self.attr,
            "entity": self.entity,
            "list_entities": self.list_entities,
            "print": self.print,
        }

    def result(self, error: BaseException | None) -> ExecResult:
        """The run's result; `error` is what stopped the code, if anything."""
        output = "".join(self.output)
        if self.printed > self.limits.output:
            output += "\n[output truncated]"
        calls = tuple(self.calls)
        if error is None:
            return ExecResult(output, calls=calls, steps=self.steps)
        line = _snippet_line(error)
        where = f" (line {line})" if line is not None else ""
        message = f"{type(error).__name__}: {self._message(error)}{where}"
        return ExecResult(output, message, _error_code(error), calls, steps=self.steps)

    def _message(self, error: BaseException) -> str:
        """The error's message, unless the code made it too long to show (`assert 0, huge`)."""
        try:
            self.guards.check_text(error.args)
        except MemoryLimitError:
            return "(a message too long to show)"
        return str(error)

    # --- the budget ------------------------------------------------------------------------------

    def tick(self) -> bool:
        """Count one step: a loop iteration, a comprehension item, a call or a copy."""
        self.steps += 1
        if self.steps >= self.next_check:
            self.check()
        return True

    def check(self) -> None:
        """Stop the code when it has used up its steps, its time or its memory."""
        limits = self.limits
        if self.steps > limits.steps:
            raise StepLimitError(
                f"The code ran over {limits.steps} steps (loop iterations, calls, operations); "
                "look for an endless loop or recursion"
            )
        if time.perf_counter() > self.deadline:
            raise TimeLimitError(f"The code ran over {limits.seconds} s")
        if limits.memory is not None and _memory() - self.memory_start > limits.memory:
            raise MemoryLimitError(f"The code used over {limits.memory // 2**20} MiB of memory")
        self.next_check = min(self.steps + CHECK_EVERY, limits.steps + 1)

    # --- the API ---------------------------------------------------------------------------------

    def call_service(
        self,
        domain: str,
        service: str,
        data: Mapping[str, Any] | None = None,
        target: Mapping[str, Any] | None = None,
        **fields: Any,
    ) -> None:
        """Call a Home Assistant action, e.g. call_service("switch", "turn_on", entity_id=...)."""
        self.guards.check_text((data, target, fields))  # copied next; the home's errors quote it
        call = _service_call(domain, service, data, target, fields)
        self.calls.append(call)
        if self.auditor is not None:
            self.auditor.enforce(self.home, call.domain, call.service, call.data, call.target)
        if self.saved is None:
            self.saved = self.home.snapshot()
        self.home.call_service(call.domain, call.service, call.data, call.target)

    def state(self, entity_id: str) -> str:
        """The entity's state string."""
        return self._state(entity_id).state

    def attr(self, entity_id: str, name: str) -> Any:
        """One state attribute of the entity, None when it has no such attribute."""
        return _detached(self._state(entity_id).attributes.get(name))

    def entity(self, entity_id: str) -> EntityView:
        """A read-only view of the entity's state."""
        return EntityView(self._state(entity_id))

    def _state(self, entity_id: str) -> State:
        if type(entity_id) is not str:
            raise EntityNotFoundError(f"Entity ids are strings, got {type(entity_id).__name__}")
        return self.home.state(entity_id)

    def list_entities(self, domain: str | None = None, area: str | None = None) -> list[str]:
        """The ids of the home's entities, sorted; only those of `domain` and `area` if given."""
        home = self.home
        if area is not None and (type(area) is not str or area not in home.areas):
            known = ", ".join(sorted(home.areas)) or "none"
            shown = repr(area) if type(area) is str else type(area).__name__
            raise TargetNotFoundError(f"No area with id {shown}; the home's areas: {known}")
        return sorted(
            entity_id
            for entity_id in home.states
            if (domain is None or entity_id.partition(".")[0] == domain)
            and (area is None or home.area_of(entity_id) == area)
        )

    def print(self, *values: Any, sep: str | None = " ", end: str | None = "\n") -> None:
        """Print to the run's output, which keeps its first `Limits.output` characters."""
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        if type(sep) is not str or type(end) is not str:
            raise TypeError("print's sep and end must be strings")
        for index, value in enumerate(values):
            if index:
                self._write(sep)
            self._write(self.guards.to_text(value))
        self._write(end)

    def _write(self, text: str) -> None:
        room = self.limits.output - self.printed
        if room > 0:
            self.output.append(text[:room])
        self.printed += len(text)


def _service_call(
    domain: Any, service: Any, data: Any, target: Any, fields: dict[str, Any]
) -> ServiceCall:
    """The call with target keys in `target` and the rest in `data`, detached from the code's
    objects (the home merges both, as Home Assistant does)."""
    if type(domain) is not str or type(service) is not str:
        raise ServiceNotFoundError(
            "call_service takes the domain and the service as strings, "
            'e.g. call_service("switch", "turn_on", entity_id="switch.kettle")'
        )
    call_data: dict[str, Any] = {}
    call_target: dict[str, Any] = {}
    for given in (_mapping(data, "data"), _mapping(target, "target"), fields):
        for key, value in given.items():
            into = call_target if key in TARGET_KEYS else call_data
            if key in into:
                raise InvalidServiceDataError(f"{key} is given twice; give it once")
            into[key] = value
    return ServiceCall(domain, service, _detached(call_data), _detached(call_target))


def _mapping(value: Any, name: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidServiceDataError(
            f"{name} must be a dict, got {type(value).__name__}; or use keywords: entity_id=..."
        )
    return dict(value)


def _detached(value: Any) -> Any:
    """A copy that shares no mutable container with `value`."""
    kind = type(value)
    if kind is list or kind is tuple or kind is set:
        return kind(_detached(item) for item in value)
    if kind is dict:
        return {key: _detached(item) for key, item in value.items()}
    return value


def _snippet_line(error: BaseException) -> int | None:
    """The line of the code where `error` was raised (the innermost frame of the code)."""
    line = None
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == FILENAME:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def _error_code(error: BaseException) -> str:
    if isinstance(error, TwinError | SandboxLimitError):
        return str(error.code)
    if isinstance(error, MemoryError):
        return MemoryLimitError.code
    return "code_error"


def _memory() -> int:
    """The process's resident memory in bytes: current on Linux, else the peak; 0 if unknown."""
    if _HAS_STATM:
        statm = os.open(_STATM, os.O_RDONLY)  # opened each time: /proc/self changes on fork
        try:
            return int(os.read(statm, 64).split()[1]) * _PAGE
        finally:
            os.close(statm)
    if sys.platform == "win32":
        return 0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * _RSS_UNIT


# --- the size checks -----------------------------------------------------------------------------


class _Guards:
    """One run's checked builtins and hooks: sizes are checked before anything is built, and the
    functions that builtins call back (map's function, sort keys) count steps."""

    def __init__(self, size: int, tick: Callable[[], bool]) -> None:
        self.size = size
        self.tick = tick
        self.builtins: dict[str, Any] = {
            **SAFE_BUILTINS,
            "str": self.to_text,
            "range": self.make_range,
            "zip": self.zip,
            "map": self.map,
            "filter": self.filter,
            "sorted": self.sorted,
            "min": self.min,
            "max": self.max,
            "_add": self.add,
            "_iadd": self.iadd,
            "_mul": self.mul,
            "_imul": self.imul,
            "_pow": self.power,
            "_lshift": self.lshift,
            "_mod": self.mod,
            "_method": self.method,
            "_format_value": self.format_value,
            "_join_text": self.join_text,
        }

    def _over(self, what: str, amount: int, unit: str) -> MemoryLimitError:
        return MemoryLimitError(
            f"{what} would have {amount} {unit}; the sandbox allows {self.size} per operation"
        )

    # Binary operators.

    def add(self, a: Any, b: Any) -> Any:
        self._concat(a, b)
        return a + b

    def iadd(self, a: Any, b: Any) -> Any:
        self._concat(a, b)
        a += b
        return a

    def mul(self, a: Any, b: Any) -> Any:
        self._product(a, b)
        return a * b

    def imul(self, a: Any, b: Any) -> Any:
        self._product(a, b)
        a *= b
        return a

    def power(self, a: Any, b: Any) -> Any:
        if type(a) is int and type(b) is int and b > 0 and (a.bit_length() - 1) * b > self.size:
            raise self._over(f"{a} ** {b}", (a.bit_length() - 1) * b, "bits")
        return a**b

    def lshift(self, a: Any, b: Any) -> Any:
        if type(a) is int and type(b) is int and a and a.bit_length() + b > self.size:
            raise self._over(f"{a} << {b}", a.bit_length() + b, "bits")
        return a << b

    def mod(self, a: Any, b: Any) -> Any:
        if type(a) is str or type(a) is bytes:
            self._percent(a, b)
        return a % b

    def _concat(self, a: Any, b: Any) -> None:
        if type(a) in _SEQUENCES and type(b) in _SEQUENCES and len(a) + len(b) > self.size:
            raise self._over(f"Adding to a {type(a).__name__}", len(a) + len(b), _unit(a))

    def _product(self, a: Any, b: Any) -> None:
        if type(a) in _SEQUENCES or type(b) in _SEQUENCES:
            sequence, times = (a, b) if type(a) in _SEQUENCES else (b, a)
            if isinstance(times, int) and len(sequence) * times > self.size:
                total = len(sequence) * times
                raise self._over(f"Repeating a {type(sequence).__name__}", total, _unit(sequence))
        elif isinstance(a, int) and isinstance(b, int):
            bits = a.bit_length() + b.bit_length()
            if bits > self.size:
                raise self._over("The product", bits, "bits")

    def _percent(self, text: str | bytes, values: Any) -> None:
        template = text.decode("latin-1") if isinstance(text, bytes) else text
        for match in _PERCENT.finditer(template):
            for number in match.groups():
                if number == "*":
                    raise ValueError("'*' widths are not allowed; write the width in the format")
                if number is not None:
                    self._width(int(number))
        self.check_text(values)

    def _width(self, width: Any) -> None:
        if isinstance(width, int) and width > self.size:
            raise self._over("Padding to that width", width, "characters")

    def _spec(self, spec: str) -> None:
        for number in _DIGITS.findall(spec):
            self._width(int(number))

    # Builtins and methods.

    def to_text(self, value: Any = "", *args: Any) -> str:
        """str(), with a check that the text is not too long."""
        self.check_text(value)
        return str(value, *args)

    def make_range(self, *args: Any) -> range:
        """range(), limited to `size` numbers."""
        numbers = range(*args)
        try:
            count = len(numbers)
        except OverflowError:
            count = sys.maxsize
        if count > self.size:
            raise self._over("range()", count, "numbers")
        return numbers

    def method(self, value: Any, name: str) -> Any:
        """`value.name` for a guarded method name: the checked version for str, bytes and list."""
        if isinstance(value, type):
            raise AttributeError(f"Call {name} on a value, e.g. x.{name}(...), not on a type")
        bound = getattr(value, name)
        if type(value) not in _SEQUENCES:
            return bound
        checked = _CHECKED_METHODS[name]
        return lambda *args, **kwargs: checked(self, value, *args, **kwargs)

    # Builtins that call functions back.

    def counted(self, function: Any) -> Any:
        """`function`, counting a step at each call (None stays None: no key, no filter)."""
        if function is None:
            return None
        tick = self.tick

        def call(*args: Any, **kwargs: Any) -> Any:
            tick()
            return function(*args, **kwargs)

        return call

    def map(self, function: Any, *iterables: Any) -> Any:
        """map(), counting each call of `function`."""
        self._few(iterables, "map")
        return map(self.counted(function), *iterables)

    def filter(self, function: Any, iterable: Any) -> Any:
        """filter(), counting each call of `function`."""
        return filter(self.counted(function), iterable)

    def zip(self, *iterables: Any, strict: bool = False) -> Any:
        """zip() of a few iterables: zip(*many) would build huge tuples in one C call."""
        self._few(iterables, "zip")
        return zip(*iterables, strict=strict)

    def sorted(self, iterable: Any, /, **kwargs: Any) -> list[Any]:
        """sorted(), counting each call of `key`."""
        return sorted(iterable, **self._counted_key(kwargs))

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """min(), counting each call of `key`."""
        return min(*args, **self._counted_key(kwargs))

    def max(self, *args: Any, **kwargs: Any) -> Any:
        """max(), counting each call of `key`."""
        return max(*args, **self._counted_key(kwargs))

    def _counted_key(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        if "key" in kwargs:
            kwargs["key"] = self.counted(kwargs["key"])
        return kwargs

    def _few(self, iterables: tuple[Any, ...], name: str) -> None:
        if len(iterables) > MAX_ITERABLES:
            raise ValueError(
                f"{name}() takes at most {MAX_ITERABLES} iterables here, got {len(iterables)}"
            )

    def format_value(self, value: Any, conversion: int, spec: str) -> str:
        """One `{value!conversion:spec}` field of an f-string."""
        self.check_text(value)
        self._spec(spec)
        if conversion == ord("s"):
            value = str(value)
        elif conversion == ord("r"):
            value = repr(value)
        elif conversion == ord("a"):
            value = ascii(value)
        return format(value, spec)

    def join_text(self, *parts: str) -> str:
        """The text of an f-string, from its already formatted parts."""
        total = sum(map(len, parts))
        if total > self.size:
            raise self._over("The f-string", total, "characters")
        return "".join(parts)

    def str_format(self, text: str, *args: Any, **kwargs: Any) -> str:
        for _, field, spec, _ in _FORMATTER.parse(text):
            if field is None:
                continue
            if "." in field or "[" in field:
                raise ValueError(
                    "format fields cannot look up attributes or items; use an f-string"
                )
            if spec and "{" in spec:
                raise ValueError("nested format fields are not allowed; use an f-string")
            self._spec(spec or "")
        self.check_text(args)
        self.check_text(kwargs)
        return text.format(*args, **kwargs)

    def join(self, separator: str | bytes, items: Any) -> Any:
        items = list(items)
        total = len(separator) * len(items)
        for item in items:
            if type(item) is type(separator):
                total += len(item)
        if total > self.size:
            raise self._over("The joined text", total, "characters")
        return separator.join(items)

    def replace(self, text: Any, old: Any, new: Any, count: Any = -1) -> Any:
        if type(old) is type(text) and type(new) is type(text):
            times = text.count(old)
            if type(count) is int and 0 <= count < times:
                times = count
            total = len(text) + times * (len(new) - len(old))
            if total > self.size:
                raise self._over("The replaced text", total, "characters")
        return text.replace(old, new, count)

    def pad(self, text: Any, width: Any, *args: Any, method: str) -> Any:
        self._width(width)
        return getattr(text, method)(width, *args)

    def expandtabs(self, text: Any, tabsize: Any = 8) -> Any:
        if type(tabsize) is int:
            self._width(len(text) + text.count("\t" if type(text) is str else b"\t") * tabsize)
        return text.expandtabs(tabsize)

    def extend(self, items: list[Any], values: Any) -> None:
        values = values if type(values) in _SEQUENCES else list(values)
        if len(items) + len(values) > self.size:
            raise self._over("The extended list", len(items) + len(values), "items")
        items.extend(values)

    def sort(self, items: list[Any], **kwargs: Any) -> None:
        items.sort(**self._counted_key(kwargs))

    def check_text(self, value: Any) -> None:
        """Refuse values whose text form would exceed `size` characters (shared items count
        each time they appear, as they do when printed)."""
        if type(value) in _ATOMS:
            return
        total = 0
        pending = [value]
        while pending:
            item = pending.pop()
            kind = type(item)
            if kind in _CONTAINERS:
                total += len(item) + 2
                if total <= self.size:
                    pending.extend(item)
            elif kind in _MAPPINGS:
                total += 2 * len(item) + 2
                if total <= self.size:
                    pending.extend(item.keys())
                    pending.extend(item.values())
            elif kind is str or kind is bytes:
                total += len(item) + 2
            elif kind is int:
                total += item.bit_length() // 3 + 1
            else:
                total += 32
            if total > self.size:
                raise MemoryLimitError(
                    f"The text of this value would have over {self.size} characters, "
                    "the sandbox's limit per operation"
                )


_CHECKED_METHODS: Mapping[str, Callable[..., Any]] = MappingProxyType(
    {
        "format": _Guards.str_format,
        "join": _Guards.join,
        "replace": _Guards.replace,
        "expandtabs": _Guards.expandtabs,
        "extend": _Guards.extend,
        "sort": _Guards.sort,
        **{
            name: functools.partial(_Guards.pad, method=name)
            for name in ("center", "ljust", "rjust", "zfill")
        },
    }
)


def _unit(sequence: Any) -> str:
    return "characters" if type(sequence) in (str, bytes) else "items"


def _round(number: Any, ndigits: Any = None) -> Any:
    """round(), without the huge powers of ten that a huge `ndigits` computes."""
    if isinstance(ndigits, int) and not -1000 <= ndigits <= 1000:
        raise ValueError(f"round's ndigits must be between -1000 and 1000, got {ndigits}")
    return round(number, ndigits)


def _sum(values: Any, start: Any = 0) -> Any:
    """sum() of numbers; joining lists with sum would bypass the size checks."""
    if type(start) not in (int, float, bool):
        raise TypeError("sum adds numbers only; build lists with a comprehension or extend")
    return sum(values, start)


SAFE_BUILTINS: Mapping[str, Any] = MappingProxyType(
    {
        "len": len,
        "sum": _sum,
        "abs": abs,
        "round": _round,
        "reversed": reversed,
        "enumerate": enumerate,
        "any": any,
        "all": all,
        "int": int,
        "float": float,
        "bool": bool,
        "list": list,
        "dict": dict,
        "tuple": tuple,
        "set": set,
    }
)
