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
    print(*values, sep=" ", end="\\n")      output is kept up to `SandboxLimits.output` characters

plus the builtins len, range, min, max, sum, abs, round, sorted, reversed, enumerate, zip, map,
filter, any, all, int, float, str, bool, list, dict, tuple and set (str, int, range, min, max, sum,
round, sorted, enumerate, zip, map, filter, set and dict are checked functions, not the types; zip
and map take at most MAX_ITERABLES iterables). Functions and lambdas may be defined: with the rules
below a lambda can do nothing a def cannot. An unknown entity, a refused call or any other error
stops the code.

Safety comes in three layers:
1. Validation, before anything runs: `import`, `class`, `try`, `with`, `global`, `nonlocal`,
   `async`, `yield`, `match`, names and attributes starting with `_` (a bare `_` name is allowed),
   frame and code introspection attributes (`gi_frame`, `f_globals`...), attribute and slice
   assignment, and the names in FORBIDDEN_NAMES are refused; such code is not run, and the result
   lists the constructs found (`ExecResult.restricted`).
2. Metering, per operation: the syntax tree is rewritten so that a step is counted at every loop
   iteration, comprehension item, call (also the calls that builtins make: map's function, sort
   keys, each item that enumerate, zip and filter hand on) and operation that can copy a sequence
   (slices, unpacking, most binary operators). Work that grows faster than its input is counted
   too, one step per WORK_PER_STEP units, before it is done: big-int products, divisions and
   powers (digit products), int <-> decimal text (the square of the digits), set unions of many
   iterables (their items), and every C loop over the items of a container: sorting (the weight
   of what it compares times log2 of their count), min, max, sum, `in`, count, index and remove
   (the weight of what they visit), comparisons (the lighter operand's weight) and hashing
   (set and dict displays, comprehensions, keys and methods, set(), dict(): the key's weight).
   A value's weight (_weight) is its expanded size as the loop sees it: 1 per scalar and
   container, an int's digits, a text's length / _TEXT_PER_UNIT, a shared item counted each
   time it occurs; it is found in time linear in the distinct objects, and only up to what the
   steps left allow, so `[row] * 10**5` or a tuple DAG (`t = (t, t)`) is refused at once
   rather than sorted, compared or hashed for hours. Whenever the count passes a multiple of
   CHECK_EVERY the wall time and the process's memory are checked, so no stretch of work between
   two checks is long. Each operation that can build a large object in one C call checks the
   *total* size of what it builds against `SandboxLimits.size` first: sequence repetition and
   concatenation, int power, shift and product, int() of text, padding, joining, replacing,
   `range`, `list.extend`, `str()` of containers; %-formatting, str.format and f-strings are
   built one field at a time with the total checked as it grows; methods that can return more
   than they were given (encode, decode, hex, upper...) are checked on their result, and encode
   and decode take only the fast codecs of TEXT_CODECS. Try statements are refused and the limit
   errors derive from BaseException, so code can never swallow them.
3. Atomicity: the home is saved before the first service call and restored when the code fails.

What in-process checks cannot stop: a stretch of C work between two checks is bounded, not
zero (weights approximate the work, within a small factor), and a bug in the interpreter or in
these checks is not excluded. Run code from untrusted humans in a worker process with a hard
timeout as well.
"""

from __future__ import annotations

import ast
import copy
import functools
import itertools
import math
import operator
import os
import re
import string
import sys
import time
from collections.abc import Callable, Iterator, Mapping
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
    from .auditor import ActionPolicy
    from .confirmation import Confirmation
    from .home import Home, Snapshot

FILENAME = "<snippet>"
CHECK_EVERY = 32  # steps between checks of the wall time and the memory
MAX_ITERABLES = 32  # zip(*many) builds len(many)-tuples in C, without counting steps
# Units of C-level work counted as one step: digit products of big-int arithmetic, item
# comparisons of a sort, items of a set union. About a microsecond's worth or less.
WORK_PER_STEP = 1000
# The codecs encode and decode may use: all C-fast and at most 4 bytes a character. Others are
# slow (punycode and idna are pure Python, and quadratic) or grow text many times over.
TEXT_CODECS = frozenset(
    {
        "utf-8",
        "utf8",
        "utf-16",
        "utf16",
        "utf-16-le",
        "utf-16le",
        "utf-16-be",
        "utf-16be",
        "utf-32",
        "utf32",
        "utf-32-le",
        "utf-32le",
        "utf-32-be",
        "utf-32be",
        "ascii",
        "us-ascii",
        "latin-1",
        "latin1",
        "iso-8859-1",
        "iso8859-1",
    }
)
CODEC_ERRORS = frozenset({"strict", "ignore", "replace"})

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
# Attributes that reach the host (format_map), or build huge objects (to_bytes, from_bytes,
# translate).
FORBIDDEN_ATTRIBUTES = frozenset(
    {"format_map", "translate", "maketrans", "to_bytes", "from_bytes", "mro"}
)
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
_BINARY_HOOKS = {
    ast.Add: "_add",
    ast.Mult: "_mul",
    ast.Pow: "_pow",
    ast.LShift: "_lshift",
    ast.Mod: "_mod",
    ast.FloorDiv: "_floordiv",
}
_INPLACE_HOOKS = {**_BINARY_HOOKS, ast.Add: "_iadd", ast.Mult: "_imul"}

_SEQUENCES = (str, bytes, list, tuple)
_GUARDED_TYPES = (*_SEQUENCES, set, dict)  # the types whose GUARDED_METHODS are checked
_CONTAINERS: tuple[type, ...] = (
    list,
    tuple,
    set,
    frozenset,
    type({}.keys()),
    type({}.values()),
    type({}.items()),
)
_MAPPINGS = (dict, MappingProxyType)
# What a C loop (a sort, a comparison, a hash, a search, a sum) goes through item by item, so that
# the loop is charged their weight (see _weight) before it runs; other values take a fast path.
_NESTED = frozenset({*_CONTAINERS, *_MAPPINGS})
_PAIRED = frozenset({*_MAPPINGS, type({}.items())})  # their members are keys and values
_HASHED = frozenset({set, frozenset, dict, type({}.keys()), MappingProxyType})  # `in` hashes
_INTS = frozenset({int, bool})
_FLAT_ITERABLES = frozenset({*_MAPPINGS, range, str, bytes})  # nothing nested to hash in them
_LIGHT = frozenset({float, bool, type(None)})  # weight 1
# Characters a comparison or hash of text gets through (memcmp, or a hash cached once made) in the
# time of one item of a C loop.
_TEXT_PER_UNIT = 64
_WEIGH_TICK = 2**15  # units weighed between two steps counted, so that weighing is checked too
_COMPARISONS: Mapping[str, Callable[[Any, Any], Any]] = MappingProxyType(
    {
        "==": operator.eq,
        "!=": operator.ne,
        "<": operator.lt,
        "<=": operator.le,
        ">": operator.gt,
        ">=": operator.ge,
        "in": lambda item, container: item in container,
        "not in": lambda item, container: item not in container,
        "is": operator.is_,
        "is not": operator.is_not,
    }
)
_OPERATORS: Mapping[type[ast.cmpop], str] = MappingProxyType(
    {
        ast.Eq: "==",
        ast.NotEq: "!=",
        ast.Lt: "<",
        ast.LtE: "<=",
        ast.Gt: ">",
        ast.GtE: ">=",
        ast.In: "in",
        ast.NotIn: "not in",
        ast.Is: "is",
        ast.IsNot: "is not",
    }
)
_ATOMS = (str, bytes, float, bool, type(None))  # their text is at most their own size
_SMALL_INT = 2**64  # a constant operand below this cannot make `+`, `-`, `/`, `//` work hard
# One %-conversion after its '%' and key, as CPython reads it: flags, width, precision, length.
_PERCENT_SPEC = re.compile(r"[-+ #0]*(\*|[0-9]+)?(?:\.(\*|[0-9]*))?[hlL]?")
_PERCENT_TYPES: Mapping[type, str] = MappingProxyType(
    {str: "sradiuoxXeEfFgGc", bytes: "sbradiuoxXeEfFgGc"}
)
_PARENTHESES = re.compile(r"[()]")
_DIGITS = re.compile(r"\d+")
_FORMATTER = string.Formatter()
_LIMB_BITS = 30  # CPython's int digit
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
class SandboxLimits:
    """What one run may use. `size` caps what one operation builds: characters of a string,
    items of a sequence, bits of an int. `memory` caps how much the process's resident memory
    may grow while the code runs (None: unchecked); other threads' allocations count too."""

    steps: int = 100_000
    seconds: float = 1.0
    size: int = 100_000
    memory: int | None = 256 * 2**20
    output: int = 10_000
    code: int = 20_000


DEFAULT_LIMITS = SandboxLimits()


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
    code: str,
    home: Home,
    limits: SandboxLimits = DEFAULT_LIMITS,
    auditor: ActionPolicy | None = None,
    confirmation: Confirmation | None = None,
) -> ExecResult:
    """Run `code` against `home`; on any error the home is left exactly as before.

    With an `auditor`, each call_service is first screened by its policy (sensitive actions by
    the conversation's `confirmation`), and a refused one stops the code with the auditor's
    feedback code.
    """
    if len(code) > limits.code:
        message = f"The code has {len(code)} characters; the sandbox runs at most {limits.code}"
        return ExecResult(error=message, error_code="code_error")
    program = _compile(code)
    if program.code is None:
        return ExecResult(
            error=program.error, error_code=program.error_code, restricted=program.restricted
        )
    runner = _Run(home, limits, auditor, confirmation)
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
        if not isinstance(node.slice, ast.Slice):
            node.slice = _key(node.slice)  # a dict key
        elif isinstance(node.ctx, ast.Load):
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
        node.keys = [None if key is None else _key(key) for key in node.keys]
        return node

    def visit_Set(self, node: ast.Set) -> ast.Set:
        self.generic_visit(node)
        node.elts = [_key(element) for element in node.elts]
        return node

    def visit_SetComp(self, node: ast.SetComp) -> ast.SetComp:
        self.generic_visit(node)
        node.elt = _key(node.elt)
        return node

    def visit_DictComp(self, node: ast.DictComp) -> ast.DictComp:
        self.generic_visit(node)
        node.key = _key(node.key)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        """Comparisons go through _Guards.compare, which charges the C loop they may run, unless
        they are cheap (_is_cheap). A chain (`a < b < c`) becomes `a < b and b < c` when its middle
        operands are names or constants that nothing in it can rebind; otherwise it holds each
        middle operand on the guards' stack while its two comparisons run, so that it is
        evaluated once and only when needed, as Python does."""
        self.generic_visit(node)
        operands = [node.left, *node.comparators]
        links = list(zip(node.ops, operands, operands[1:], strict=False))
        if len(links) == 1 or (
            all(isinstance(operand, ast.Name | ast.Constant) for operand in operands[1:-1])
            and not any(isinstance(child, ast.NamedExpr) for child in ast.walk(node))
        ):
            parts = [_comparison(op, left, right) for op, left, right in links]
            return ast.copy_location(
                parts[0] if len(parts) == 1 else ast.BoolOp(ast.And(), parts), node
            )
        ops = [ast.Constant(_OPERATORS[type(op)]) for op in node.ops]
        *middle, last = node.comparators
        chain: list[ast.expr] = [
            _call("_compare", [node.left, ops[0], _call("_hold", [middle[0]])])
        ]
        for op, operand in zip(ops[1:-1], middle[1:], strict=True):
            chain.append(_call("_compare", [_call("_held", []), op, _call("_rehold", [operand])]))
        chain.append(_call("_compare", [_call("_held", []), ops[-1], last]))
        return ast.copy_location(_call("_unhold", [ast.BoolOp(ast.And(), chain)]), node)

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

    def visit_FormattedValue(self, node: ast.FormattedValue) -> ast.Tuple:
        # Only inside a JoinedStr, which visit_JoinedStr turns into a call that formats the
        # (value, conversion, spec) tuples one at a time.
        self.generic_visit(node)
        conversion = ast.Constant(chr(node.conversion) if node.conversion >= 0 else None)
        spec = node.format_spec or ast.Constant("")
        return ast.Tuple([node.value, conversion, spec], ast.Load())

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


def _key(node: ast.expr) -> ast.expr:
    """`_key(node)` for a set item or dict key: hashing a tuple is charged first. Constants need
    no call."""
    return node if isinstance(node, ast.Constant) else _call("_key", [node])


def _comparison(op: ast.cmpop, left: ast.expr, right: ast.expr) -> ast.expr:
    """`left op right`, through _Guards.compare unless it is cheap; the operands copied, as a
    chain's middle operand takes part in two comparisons."""
    left, right = copy.copy(left), copy.copy(right)
    if _is_cheap(op, left, right):
        return ast.Compare(left, [op], [right])
    return _call("_compare", [left, ast.Constant(_OPERATORS[type(op)]), right])


def _is_cheap(op: ast.cmpop, left: ast.expr, right: ast.expr) -> bool:
    """`x == 0`, `"a" in "abc"`, `x is None`: comparing with a constant (a scalar: tuples are not
    ast.Constant) stops at once, and searching one is linear in its length; only `in` loops
    over the items of an operand that is not a constant."""
    if isinstance(op, ast.Is | ast.IsNot):
        return True
    if isinstance(op, ast.In | ast.NotIn):
        return isinstance(right, ast.Constant)
    return isinstance(left, ast.Constant) or isinstance(right, ast.Constant)


def _is_small(op: ast.operator, left: ast.expr, right: ast.expr) -> bool:
    """`i + 1`, `n -= 1`, `x // 2`: with a small number, only *, **, << and % can build big
    things or work hard."""
    return not isinstance(op, ast.Mult | ast.Pow | ast.LShift | ast.Mod) and any(
        isinstance(side, ast.Constant) and _small_number(side.value) for side in (left, right)
    )


def _small_number(value: Any) -> bool:
    return type(value) is float or (type(value) is int and -_SMALL_INT < value < _SMALL_INT)


# --- running -------------------------------------------------------------------------------------


class _Run:
    """One run of a snippet: its budget, the API it sees, its output and its service calls."""

    def __init__(
        self,
        home: Home,
        limits: SandboxLimits,
        auditor: ActionPolicy | None,
        confirmation: Confirmation | None,
    ) -> None:
        self.home = home
        self.limits = limits
        self.auditor = auditor
        self.confirmation = confirmation
        self.steps = 0
        self.next_check = min(CHECK_EVERY, limits.steps + 1)
        self.deadline = time.perf_counter() + limits.seconds
        self.memory_start = _memory() if limits.memory is not None else 0
        self.output: list[str] = []
        self.printed = 0
        self.calls: list[ServiceCall] = []
        self.saved: Snapshot | None = None
        self.guards = _Guards(limits.size, self.tick, self.charge, self.room)

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
        """The error's message, unless the code made it too long to show (`assert 0, huge`) or
        unwritable (`{}[10**5000]`: Python writes ints of at most 4300 digits)."""
        try:
            self.guards.text_work(error.args)
        except (MemoryLimitError, ValueError):
            return "(a message too long to show)"
        return str(error)

    # --- the budget ------------------------------------------------------------------------------

    def tick(self) -> bool:
        """Count one step: a loop iteration, a comprehension item, a call or a copy."""
        self.steps += 1
        if self.steps >= self.next_check:
            self.check()
        return True

    def charge(self, work: int) -> None:
        """Count `work` (in units of C-level work) as steps before it is done: when it is more
        than the checks' spacing, the checks run first, and stop it if it would pass the steps."""
        if work >= WORK_PER_STEP:
            self.steps += work // WORK_PER_STEP
            if self.steps >= self.next_check:
                self.check()

    def room(self) -> int:
        """The units of work the steps left allow."""
        return (self.limits.steps + 1 - self.steps) * WORK_PER_STEP

    def check(self) -> None:
        """Stop the code when it has used up its steps, its time or its memory."""
        limits = self.limits
        if self.steps > limits.steps:
            raise StepLimitError(
                f"The code ran over {limits.steps} steps (loop iterations, calls, operations, "
                "big-number arithmetic, sorting); look for an endless loop or recursion"
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
        arguments = (call.domain, call.service, call.data, call.target)
        audited = (
            None
            if self.auditor is None
            else self.auditor.enforce(self.home, *arguments, self.confirmation)
        )
        if self.saved is None:
            self.saved = self.home.snapshot()
        if audited is None:
            self.home.call_service(*arguments)
        else:
            self.home.apply(self.home.plan(audited))

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
        """Print to the run's output, which keeps its first `SandboxLimits.output` characters."""
        sep = " " if sep is None else sep
        end = "\n" if end is None else end
        if type(sep) is not str or type(end) is not str:
            raise TypeError("print's sep and end must be strings")
        for index, value in enumerate(values):
            if self.printed > self.limits.output:
                return  # the output is full: print(*many) would only convert the rest for nothing
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
    """One run's checked builtins and hooks: sizes are checked before anything is built, work that
    grows faster than its input (big-int arithmetic, sorting, C loops over items: see _weight) is
    charged as steps before it is done, and the functions that builtins call back (map's function,
    sort keys) count steps."""

    def __init__(
        self,
        size: int,
        tick: Callable[[], bool],
        charge: Callable[[int], None],
        room: Callable[[], int],
    ) -> None:
        self.size = size
        self.tick = tick
        self.charge = charge
        self.room = room
        self.held: list[Any] = []  # the middle operands of the comparison chains being run
        self.builtins: dict[str, Any] = {
            **SAFE_BUILTINS,
            "sum": self.sum,
            "set": self.make_set,
            "dict": _DictBuiltin(self),
            "str": self.to_text,
            "int": self.to_int,
            "range": self.make_range,
            "enumerate": self.enumerate,
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
            "_floordiv": self.floordiv,
            "_method": self.method,
            "_join_text": self.join_text,
            "_compare": self.compare,
            "_key": self.key,
            "_hold": self.hold,
            "_held": self.top,
            "_rehold": self.rehold,
            "_unhold": self.unhold,
        }

    def over(self, what: str, amount: int, unit: str) -> MemoryLimitError:
        """The error for an operation that would build `amount` units."""
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
        if _is_int(a) and _is_int(b) and b > 0:
            bits = _power_bits(a, b)
            if bits > self.size:
                raise self.over(f"{_shown(a)} ** {_shown(b)}", bits, "bits")
            self.charge(_limbs(bits) ** 2 // 3)  # squarings, the last of half the bits
        return a**b

    def lshift(self, a: Any, b: Any) -> Any:
        if _is_int(a) and _is_int(b) and a and a.bit_length() + b > self.size:
            raise self.over(f"{_shown(a)} << {_shown(b)}", a.bit_length() + b, "bits")
        return a << b

    def mod(self, a: Any, b: Any) -> Any:
        if type(a) is str or type(a) is bytes:
            return self.percent(a, b)
        self._division(a, b)
        return a % b

    def floordiv(self, a: Any, b: Any) -> Any:
        self._division(a, b)
        return a // b

    def _concat(self, a: Any, b: Any) -> None:
        if type(a) in _SEQUENCES and type(b) in _SEQUENCES and len(a) + len(b) > self.size:
            raise self.over(f"Adding to a {type(a).__name__}", len(a) + len(b), _unit(a))

    def _product(self, a: Any, b: Any) -> None:
        if type(a) in _SEQUENCES or type(b) in _SEQUENCES:
            sequence, times = (a, b) if type(a) in _SEQUENCES else (b, a)
            if isinstance(times, int) and len(sequence) * times > self.size:
                total = len(sequence) * times
                raise self.over(f"Repeating a {type(sequence).__name__}", total, _unit(sequence))
        elif _is_int(a) and _is_int(b):
            bits = a.bit_length() + b.bit_length()
            if bits > self.size:
                raise self.over("The product", bits, "bits")
            self.charge(_limbs(a.bit_length()) * _limbs(b.bit_length()))

    def _division(self, a: Any, b: Any) -> None:
        """Charge a big-int division (`//`, `%`): a digit product per quotient digit and divisor
        digit, as long division does."""
        if _is_int(a) and _is_int(b):
            divisor = _limbs(b.bit_length())
            self.charge(max(_limbs(a.bit_length()) - divisor + 1, 0) * divisor)

    # %-formatting.

    def percent(self, template: Any, values: Any) -> Any:
        """`template % values`, built one conversion at a time as CPython's own loop reads it,
        so that each conversion's width and value are checked before it is built and the total
        as it grows. Reading is linear: keys may nest parentheses, as CPython allows."""
        kind = type(template)  # str or bytes
        text: str = template.decode("latin-1") if kind is bytes else template
        excluded = (tuple, str, bytes) if kind is bytes else (tuple, str)
        mapping = values
        if isinstance(values, excluded) or not hasattr(type(values), "__getitem__"):
            mapping = None  # what CPython takes for a mapping: '%(key)s' needs one
        # The current argument, their count and the next one's index, as CPython keeps them:
        # a tuple's items in turn, else the value itself once; a key makes its value the next.
        args, count, index = (
            (values, len(values), 0) if isinstance(values, tuple) else (values, -1, -2)
        )
        built = _Text(self, "The formatted text")
        position = 0
        while (start := text.find("%", position)) >= 0:
            built.add(template[position:start])
            at = start + 1
            if text.startswith("%", at):
                built.add(template[at : at + 1])
                position = at + 1
                continue
            if text.startswith("(", at):
                if mapping is None:
                    raise TypeError("format requires a mapping")
                end = _key_end(text, at)
                args, count, index = mapping[template[at + 1 : end - 1]], -1, -2
                at = end
            end, width, precision = _percent_spec(text, at)
            self.check_width(width)
            self.check_width(precision)
            if index >= count:
                raise TypeError("not enough arguments for format string")
            value = args if count < 0 else args[index]
            index += 1
            conversion = text[end]
            if conversion not in _PERCENT_TYPES[kind]:
                shown = conversion if kind is bytes or 31 <= ord(conversion) <= 126 else "?"
                raise ValueError(
                    f"unsupported format character '{shown}' (0x{ord(conversion):x}) at index {end}"
                )
            self.check_text(value, decimal=False)
            self.tick()
            built.add((template[start : start + 1] + template[at : end + 1]) % (value,))
            position = end + 1
        built.add(template[position:])
        if mapping is None and index < count:
            what = "bytes" if kind is bytes else "string"
            raise TypeError(f"not all arguments converted during {what} formatting")
        return kind().join(built.pieces)

    def check_width(self, width: Any) -> None:
        """Refuse a width (or precision) that alone would pass the size limit."""
        if isinstance(width, int) and width > self.size:
            raise self.over("Padding to that width", width, "characters")

    def check_spec(self, spec: str) -> None:
        """Refuse a format spec whose width or precision would pass the size limit."""
        for number in _DIGITS.findall(spec):
            self.check_width(_number(number))

    # Builtins and methods.

    def to_text(self, value: Any = "", *args: Any, **kwargs: Any) -> str:
        """str(), checked: the text not too long, and decoding only with a fast codec."""
        if args or kwargs:
            _check_codec(*args, **kwargs)
        else:
            self.check_text(value)
        text: str = self._result(str(value, *args, **kwargs), "str()")
        return text

    def to_int(self, value: Any = 0, *args: Any, **kwargs: Any) -> int:
        """int(), checked: a number written as text may have at most `size` bits, and reading it
        is charged (decimal digits take time quadratic in their count)."""
        if type(value) is str or type(value) is bytes:
            base = args[0] if args else kwargs.get("base", 10)
            if type(base) is int and (base == 0 or 2 <= base <= 36):
                bits = math.ceil(len(value) * math.log2(base or 16))  # base 0 reads 0x too
                if bits > self.size:
                    raise self.over("int() of that text", bits, "bits")
                self.charge(_limbs(bits) ** 2)
        return int(value, *args, **kwargs)

    def make_range(self, *args: Any) -> range:
        """range(), limited to `size` numbers."""
        numbers = range(*args)
        try:
            count = len(numbers)
        except OverflowError:
            count = sys.maxsize
        if count > self.size:
            raise self.over("range()", count, "numbers")
        return numbers

    def method(self, value: Any, name: str) -> Any:
        """`value.name` for a guarded method name: the checked version for str, bytes, list,
        tuple, set and dict."""
        if isinstance(value, type):
            raise AttributeError(f"Call {name} on a value, e.g. x.{name}(...), not on a type")
        bound = getattr(value, name)
        if type(value) not in _GUARDED_TYPES:
            return bound
        checked = _CHECKED_METHODS[name]
        return lambda *args, **kwargs: checked(self, value, *args, **kwargs)

    def _result(self, result: Any, what: str) -> Any:
        """`result`, unless it is over the size limit (for operations that build at most a few
        times what they are given, so that building it first is harmless)."""
        if len(result) > self.size:
            raise self.over(what, len(result), _unit(result))
        return result

    # Builtins that call functions back, or build an item per item in C.

    def counted(self, function: Any) -> Any:
        """`function`, counting a step at each call (None stays None: no key)."""
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
        """filter(), counting each item it tests (nested filters would loop in C uncounted)."""
        return filter(self.counted(bool if function is None else function), iterable)

    def zip(self, *iterables: Any, strict: bool = False) -> Any:
        """zip() of a few iterables, counting each tuple: zip(*many), or zips of zips, would
        build huge tuples in C without a check."""
        self._few(iterables, "zip")
        return self._each(zip(*iterables, strict=strict))

    def enumerate(self, iterable: Any, start: int = 0) -> Any:
        """enumerate(), counting each pair: enumerates of enumerates build pairs of pairs."""
        return self._each(enumerate(iterable, start))

    def _each(self, items: Any) -> Iterator[Any]:
        tick = self.tick
        return (item for item in items if tick())

    def sorted(self, iterable: Any, /, **kwargs: Any) -> list[Any]:
        """sorted(), charged as list.sort."""
        items = list(iterable)
        self.sort(items, **kwargs)
        return items

    def sort(self, items: list[Any], *, key: Any = None, reverse: Any = False) -> None:
        """list.sort(), charged the weight of what it compares (the items, or their keys) times
        log2 of their count, each item taking part in about that many comparisons; each call of
        `key` is a step. Keys are computed first, to be weighed, and sorted with their indices."""
        if key is None:
            self.weigh(items, len(items).bit_length())
            items.sort(reverse=reverse)
            return
        keys = list(map(self.counted(key), items))
        self.weigh(keys, len(keys).bit_length())
        order = sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)
        items[:] = [items[index] for index in order]

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """min(), charged as _extreme."""
        return self._extreme(min, args, **kwargs)

    def max(self, *args: Any, **kwargs: Any) -> Any:
        """max(), charged as _extreme."""
        return self._extreme(max, args, **kwargs)

    def _extreme(self, pick: Any, args: tuple[Any, ...], key: Any = None, **kwargs: Any) -> Any:
        """min() or max(), charged the weight of what it compares (the items, or their keys); each
        call of `key` is a step. Keys are computed first, to be weighed."""
        single = len(args) == 1
        items = list(args[0]) if single else args
        if key is None:
            self.weigh(items)
            return pick(*([items] if single else items), **kwargs)
        keys = list(map(self.counted(key), items))
        self.weigh(keys)
        positions = range(len(keys))
        chosen = pick(*([positions] if single else positions), key=keys.__getitem__, **kwargs)
        return items[chosen] if keys else chosen  # without items, the default

    def sum(self, values: Any, /, start: Any = 0) -> Any:
        """sum() of numbers (joining lists with sum would bypass the size checks), charged the
        weight of the values: adding big ints takes their digits."""
        if type(start) not in (int, float, bool):
            raise TypeError("sum adds numbers only; build lists with a comprehension or extend")
        values = values if type(values) in _NESTED else list(values)
        self.weigh(values)
        return sum(values, start)

    def make_set(self, *args: Any) -> set[Any]:
        """set(), charged the weight of the items it hashes."""
        return set(*map(self.hashable, args))

    def hashable(self, items: Any) -> Any:
        """`items` for a C loop that hashes them: a container, its weight charged; an iterator,
        each tuple it hands on charged (see `key`); a mapping (it keeps its keys' hashes), a range,
        a str or bytes (scalar items) as they are."""
        if type(items) in _FLAT_ITERABLES:
            return items
        if type(items) in _NESTED:
            self.weigh(items)
            return items
        return map(self.key, items)

    # C loops over items: comparisons, hashes and searches.

    def weight(self, value: Any, factor: int = 1) -> int:
        """The weight of `value`, or a partial total past what the steps left allow `factor`
        times it (see _weight)."""
        return _weight(value, self.room() // max(factor, 1), self.tick)

    def weigh(self, value: Any, factor: int = 1) -> None:
        """Charge `factor` times the weight of `value` before a C loop over its items runs; other
        values (scalars) are free."""
        if type(value) in _NESTED:
            self.charge(self.weight(value, factor) * factor)

    def compare(self, left: Any, op: str, right: Any) -> Any:
        """`left op right`, charged the C loop it may run when an operand is a container: `in`
        the weight of what it hashes (`left`, for a set or dict) or searches (`right`), the
        others the weight of the lighter operand, where a comparison of items must stop."""
        if type(left) in _NESTED or type(right) in _NESTED:
            if op == "in" or op == "not in":
                self.weigh(left if type(right) in _HASHED else right)
            elif op != "is" and op != "is not":
                lighter = self.weight(left)
                self.charge(min(lighter, _weight(right, lighter, self.tick)))
        return _COMPARISONS[op](left, right)

    def key(self, value: Any) -> Any:
        """A set item or dict key, its hash charged first when it is a tuple (hashing a tuple
        hashes all it holds, each time)."""
        if type(value) is tuple:
            self.weigh(value)
        return value

    def keyed(self, container: Any, /, *args: Any, method: str) -> Any:
        """The set and dict methods that hash their first argument (add, get, pop...), charged as
        `key`; list.remove, which compares it with the items, charged as `search`."""
        if type(container) is list:
            if method == "remove":
                self.weigh(container)
        elif args:
            self.key(args[0])
        return getattr(container, method)(*args)

    def search(self, items: Any, value: Any, *args: Any, method: str) -> Any:
        """list.count and list.index, tuple's too: charged the weight of the items they compare
        `value` with (str's and bytes' search text in linear time)."""
        self.weigh(items)
        return getattr(items, method)(value, *args)

    def hold(self, value: Any) -> Any:
        """Hold the middle operand of a comparison chain (see _Instrument.visit_Compare)."""
        self.held.append(value)
        return value

    def top(self) -> Any:
        """The operand held last."""
        return self.held[-1]

    def rehold(self, value: Any) -> Any:
        """Hold `value` instead of the operand held last."""
        self.held[-1] = value
        return value

    def unhold(self, result: Any) -> Any:
        """The chain's `result`, its operand no longer held."""
        self.held.pop()
        return result

    def _few(self, iterables: tuple[Any, ...], name: str) -> None:
        if len(iterables) > MAX_ITERABLES:
            raise ValueError(
                f"{name}() takes at most {MAX_ITERABLES} iterables here, got {len(iterables)}"
            )

    # Formatting: one field at a time.

    def join_text(self, *parts: Any) -> str:
        """An f-string from its literal parts and its (value, conversion, spec) fields."""
        built = _Text(self, "The f-string")
        for part in parts:
            built.add(self._field(*part) if type(part) is tuple else part)
        return "".join(built.pieces)

    def str_format(self, text: str, /, *args: Any, **kwargs: Any) -> str:
        """str.format: each field names an argument (no attribute or item look-ups, no nested
        fields) and is formatted in turn, so that the total is checked as it grows."""
        built = _Text(self, "The formatted text")
        automatic: int | None = 0  # the next automatic field number; None once one is numbered
        for literal, field, spec, conversion in _FORMATTER.parse(text):
            built.add(literal)
            if field is None:
                continue
            if "." in field or "[" in field:
                raise ValueError(
                    "format fields cannot look up attributes or items; use an f-string"
                )
            if spec and "{" in spec:
                raise ValueError("nested format fields are not allowed; use an f-string")
            if field and not field.isdecimal():
                value = kwargs[field]
            elif field:
                if automatic:
                    raise ValueError(
                        "cannot switch from automatic field numbering to manual field specification"
                    )
                automatic = None
                value = _argument(args, int(field))
            elif automatic is None:
                raise ValueError(
                    "cannot switch from manual field specification to automatic field numbering"
                )
            else:
                value = _argument(args, automatic)
                automatic += 1
            built.add(self._field(value, conversion, spec or ""))
        return "".join(built.pieces)

    def _field(self, value: Any, conversion: str | None, spec: str) -> str:
        """One `{value!conversion:spec}` field, its width and its value's text checked first."""
        self.tick()
        self.check_spec(spec)
        self.check_text(value, decimal=False)
        if conversion == "s":
            value = str(value)
        elif conversion == "r":
            value = repr(value)
        elif conversion == "a":
            value = ascii(value)
        elif conversion is not None:
            raise ValueError(f"Unknown conversion specifier {conversion}")
        return format(value, spec)

    # Other methods of str, bytes, list, set and dict.

    def join(self, separator: str | bytes, items: Any) -> Any:
        items = list(items)
        total = len(separator) * len(items)
        for item in items:
            if type(item) is type(separator):
                total += len(item)
        if total > self.size:
            raise self.over("The joined text", total, "characters")
        return separator.join(items)

    def replace(self, text: Any, old: Any, new: Any, count: Any = -1) -> Any:
        if type(old) is type(text) and type(new) is type(text):
            times = text.count(old)
            if type(count) is int and 0 <= count < times:
                times = count
            total = len(text) + times * (len(new) - len(old))
            if total > self.size:
                raise self.over("The replaced text", total, "characters")
        return text.replace(old, new, count)

    def pad(self, text: Any, width: Any, *args: Any, method: str) -> Any:
        self.check_width(width)
        return getattr(text, method)(width, *args)

    def expandtabs(self, text: Any, tabsize: Any = 8) -> Any:
        if type(tabsize) is int:
            self.check_width(len(text) + text.count("\t" if type(text) is str else b"\t") * tabsize)
        return text.expandtabs(tabsize)

    def grown(self, value: Any, /, *args: Any, method: str, **kwargs: Any) -> Any:
        """A method whose result can be a few times longer than `value` (upper, hex...)."""
        return self._result(getattr(value, method)(*args, **kwargs), f"{method}()")

    def recode(
        self, value: Any, encoding: Any = "utf-8", errors: Any = "strict", *, method: str
    ) -> Any:
        """str.encode and bytes.decode, with a fast codec only."""
        _check_codec(encoding, errors)
        return self.grown(value, encoding, errors, method=method)

    def extend(self, items: list[Any], values: Any) -> None:
        values = values if type(values) in _SEQUENCES else list(values)
        if len(items) + len(values) > self.size:
            raise self.over("The extended list", len(items) + len(values), "items")
        items.extend(values)

    # Text sizes.

    def check_text(self, value: Any, *, decimal: bool = True) -> None:
        """Refuse values whose text form would exceed `size` characters (shared items count
        each time they appear, as they do when printed) and, with `decimal`, those holding an int
        too long for Python to write in decimal; charge the work of writing their ints."""
        self.charge(self.text_work(value, decimal))

    def text_work(self, value: Any, decimal: bool = True) -> int:
        """check_text's checks; returns the work of writing the value's ints (the square of
        their digits), without charging it."""
        if type(value) in _ATOMS:
            return 0
        total = work = 0
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
            elif kind is int or kind is bool:
                bits = item.bit_length()
                total += bits // 3 + 1
                work += _limbs(bits) ** 2
                if decimal and _too_long_for_decimal(item):
                    raise ValueError(
                        f"An int of over {sys.get_int_max_str_digits()} digits is too long for "
                        "Python to write in decimal; write it in hex: f'{n:x}'"
                    )
            elif kind is range:
                total += 16
                pending.extend((item.start, item.stop, item.step))
            else:
                total += 32
            if total > self.size:
                raise MemoryLimitError(
                    f"The text of this value would have over {self.size} characters, "
                    "the sandbox's limit per operation"
                )
        return work


class _DictBuiltin:
    """The code's `dict`: dict() and dict.fromkeys, the keys' hashes charged first."""

    __slots__ = ("_guards",)

    def __init__(self, guards: _Guards) -> None:
        self._guards = guards

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        pairs = [item if type(item) in _MAPPINGS else map(self._keyed, item) for item in args]
        return dict(*pairs, **kwargs)

    def _keyed(self, pair: Any) -> Any:
        """A (key, value) pair, its key's hash charged (see _Guards.key)."""
        if type(pair) in _SEQUENCES and pair:
            self._guards.key(pair[0])
        return pair

    def fromkeys(self, iterable: Any, value: Any = None) -> dict[Any, Any]:
        """dict.fromkeys(iterable, value)."""
        return dict.fromkeys(self._guards.hashable(iterable), value)


class _Text:
    """A text built piece by piece, refused as soon as its total would pass the size limit."""

    __slots__ = ("guards", "pieces", "total", "what")

    def __init__(self, guards: _Guards, what: str) -> None:
        self.guards = guards
        self.what = what
        self.pieces: list[Any] = []
        self.total = 0

    def add(self, piece: Any) -> None:
        self.total += len(piece)
        if self.total > self.guards.size:
            raise self.guards.over(self.what, self.total, _unit(piece))
        self.pieces.append(piece)


def _variadic(name: str) -> Callable[..., Any]:
    """A set method taking any number of iterables (union...), charged their items, then the
    hashes of the items (see _Guards.hashable)."""

    def checked(guards: _Guards, value: Any, /, *others: Any, **kwargs: Any) -> Any:
        guards.charge(sum(map(operator.length_hint, others)))
        return getattr(value, name)(*map(guards.hashable, others), **kwargs)

    return checked


_CHECKED_METHODS: Mapping[str, Callable[..., Any]] = MappingProxyType(
    {
        "format": _Guards.str_format,
        "join": _Guards.join,
        "replace": _Guards.replace,
        "expandtabs": _Guards.expandtabs,
        "extend": _Guards.extend,
        "sort": _Guards.sort,
        **{name: functools.partial(_Guards.search, method=name) for name in ("count", "index")},
        **{
            name: functools.partial(_Guards.keyed, method=name)
            for name in ("add", "discard", "remove", "get", "setdefault", "pop")
        },
        **{
            name: functools.partial(_Guards.pad, method=name)
            for name in ("center", "ljust", "rjust", "zfill")
        },
        **{
            name: functools.partial(_Guards.grown, method=name)
            for name in ("upper", "lower", "casefold", "swapcase", "title", "capitalize", "hex")
        },
        **{name: functools.partial(_Guards.recode, method=name) for name in ("encode", "decode")},
        **{
            name: _variadic(name)
            for name in (
                "union",
                "intersection",
                "difference",
                "update",
                "intersection_update",
                "difference_update",
            )
        },
    }
)
# The method names whose calls run through _Guards.method.
GUARDED_METHODS = frozenset(_CHECKED_METHODS)


def _unit(sequence: Any) -> str:
    return "characters" if type(sequence) in (str, bytes) else "items"


def _is_int(value: Any) -> bool:
    return type(value) is int or type(value) is bool


def _limbs(bits: int) -> int:
    """CPython's digits for an int of `bits` bits: the unit of big-int work."""
    return bits // _LIMB_BITS + 1


def _power_bits(base: int, exponent: int) -> int:
    """The bits of base ** exponent (exponent > 0); a lower bound when that is astronomical."""
    size = abs(base)
    if size <= 1:
        return 1
    if exponent > 2**53:  # beyond a float's exact integers
        return (size.bit_length() - 1) * exponent + 1
    return int(exponent * math.log2(size)) + 1


def _shown(number: int) -> str:
    """A number for a message: digits when short."""
    return str(number) if number.bit_length() <= 64 else f"a {number.bit_length()}-bit int"


def _number(digits: str | None) -> int:
    """A width or precision read from a format: digits too long to read are too big anyway."""
    if not digits:
        return 0
    return int(digits) if len(digits) < 19 else sys.maxsize


def _percent_spec(text: str, at: int) -> tuple[int, int, int]:
    """Where the %-conversion whose flags start at `at` has its type letter, and its width and
    precision, as CPython reads them."""
    spec = _PERCENT_SPEC.match(text, at)
    assert spec is not None  # every part of the pattern is optional
    if spec.end() == len(text):
        raise ValueError("incomplete format")
    width, precision = spec.groups()
    if width == "*" or precision == "*":
        raise ValueError("'*' widths are not allowed; write the width in the format")
    return spec.end(), _number(width), _number(precision)


def _key_end(text: str, at: int) -> int:
    """Just past the ')' that closes the '(' at `at` (a %-format key may nest parentheses)."""
    depth = 0
    for match in _PARENTHESES.finditer(text, at):
        depth += 1 if match.group() == "(" else -1
        if not depth:
            return match.end()
    raise ValueError("incomplete format key")


def _argument(args: tuple[Any, ...], index: int) -> Any:
    if index >= len(args):
        raise IndexError(f"Replacement index {index} out of range for positional args tuple")
    return args[index]


def _check_codec(encoding: Any = "utf-8", errors: Any = "strict") -> None:
    """Refuse codecs outside TEXT_CODECS and error handlers outside CODEC_ERRORS."""
    if type(encoding) is not str or encoding.lower().replace("_", "-") not in TEXT_CODECS:
        shown = repr(encoding[:40]) if type(encoding) is str else f"a {type(encoding).__name__}"
        raise ValueError(
            f"The sandbox encodes and decodes with utf-8, utf-16, utf-32, ascii and latin-1 "
            f"only, got {shown}"
        )
    if type(errors) is not str or errors not in CODEC_ERRORS:
        raise ValueError("The sandbox's codecs take errors='strict', 'ignore' or 'replace' only")


def _too_long_for_decimal(number: int) -> bool:
    """Whether Python refuses to write `number` in decimal (sys.get_int_max_str_digits)."""
    limit = sys.get_int_max_str_digits()
    return bool(limit) and number.bit_length() > 3 * limit and abs(number) >= _ten_to(limit)


@functools.lru_cache(maxsize=4)
def _ten_to(power: int) -> int:
    return int(10**power)


def _weight(value: Any, cap: int, tick: Callable[[], bool]) -> int:
    """How much a C loop over `value` (a sort, a comparison, a hash, a search, a sum) may do: 1
    for a scalar, 1 + the length of a str or bytes / _TEXT_PER_UNIT, the digits of an int, 1
    plus the weights of its members for a container (a dict's members are its keys and values),
    a sub-object counting each time it occurs, as the loop meets it. A cycle back to a container
    counts 1 (comparing stops at identical items; repr writes [...]). Each distinct container is
    read once (a memo keyed by id, the objects alive in `value` meanwhile), so that a DAG weighs
    in linear time; the weighing stops, returning its partial total, as soon as the total passes
    `cap`, and counts a step every _WEIGH_TICK units, so that the time and memory stay checked."""
    if type(value) not in _NESTED:
        return _scalar_weight(value)
    memo: dict[int, int] = {}
    frames: list[list[Any]] = []  # the containers being read: [container, its members, weight]
    total = 0
    next_tick = _WEIGH_TICK
    container: Any = value  # a container met for the first time
    while True:
        if container is not None:
            flat = _flat_weight(container)
            if flat is None:
                memo[id(container)] = 1  # until it is read: a cycle back to it
                frames.append([container, _members(container), 1])
                total += 1
            else:
                memo[id(container)] = flat
                total += flat
                if not frames:
                    return flat
                frames[-1][2] += flat
            container = None
        if total > cap:
            return total
        if total >= next_tick:
            tick()
            next_tick = total + _WEIGH_TICK
        frame = frames[-1]
        for member in frame[1]:
            if type(member) in _NESTED:
                weight = memo.get(id(member))
                if weight is None:
                    container = member
                    break
            else:
                weight = _scalar_weight(member)
            frame[2] += weight
            total += weight
            if total > cap:
                return total
        else:
            frames.pop()
            memo[id(frame[0])] = frame[2]
            if not frames:
                return int(frame[2])
            frames[-1][2] += frame[2]


def _members(container: Any) -> Iterator[Any]:
    """What a C loop over the container meets: its items, or a mapping's keys and values."""
    if type(container) in _PAIRED:
        return itertools.chain.from_iterable(
            container if type(container) is type({}.items()) else container.items()
        )
    return iter(container)


def _flat_weight(container: Any) -> int | None:
    """The weight of a container that holds no containers, found at C speed; None when it holds
    some."""
    kinds = set(map(type, _members(container)))
    if not kinds.isdisjoint(_NESTED):
        return None
    count = len(container) * (2 if type(container) in _PAIRED else 1)
    if kinds <= _LIGHT:
        return 1 + count
    if kinds <= _INTS:
        return 1 + count + sum(map(int.bit_length, _members(container))) // _LIMB_BITS
    return 1 + sum(map(_scalar_weight, _members(container)))


def _scalar_weight(value: Any) -> int:
    kind = type(value)
    if kind is str or kind is bytes:
        return len(value) // _TEXT_PER_UNIT + 1
    if kind is int:
        return _limbs(value.bit_length())
    return 1


def _round(number: Any, ndigits: Any = None) -> Any:
    """round(), without the huge powers of ten that a huge `ndigits` computes."""
    if isinstance(ndigits, int) and not -1000 <= ndigits <= 1000:
        raise ValueError(f"round's ndigits must be between -1000 and 1000, got {ndigits}")
    return round(number, ndigits)


SAFE_BUILTINS: Mapping[str, Any] = MappingProxyType(
    {
        "len": len,
        "abs": abs,
        "round": _round,
        "reversed": reversed,
        "enumerate": enumerate,
        "any": any,
        "all": all,
        "float": float,
        "bool": bool,
        "list": list,
        "tuple": tuple,
    }
)
