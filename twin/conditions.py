"""Goal conditions: a small, safe expression language over a home's states, compiled once.

A condition is one Python expression, parsed with `ast` and compiled from a whitelist of node types
into nested closures; its text is never passed to eval:

    state("light.kitchen") == "on" and attr("light.kitchen", "brightness") >= 200
    entity("climate.bedroom").hvac_mode == "cool"
    20 <= area("study").temperature <= 24
    unchanged("lock.front_door")

- `state(id)`: the state string ("on", "21.5"); `num(id)`: the state as a float, None when it is no
  number ("unknown", "unavailable").
- `attr(id, name)` and `entity(id).name`: an attribute, None when absent; `entity(id).state`: the
  state.
- `area(id).temperature` (humidity, illuminance, co2, pm25): the area's air as the room physics
  keeps it (`home.rooms`), whether or not a sensor shows it.
- `unchanged(id)`: the same state and attributes as at the task's start; `was(id, name)`: an
  attribute as it was then, None when absent (a relative change: `attr("light.desk",
  "brightness") > was("light.desk", "brightness")`).
- `item(id, name)`: the status ("needs_action", "completed") of the item of a list (a to-do
  list's, which Home Assistant shows in no state) whose summary or uid is `name`; None when the
  list has no such item.
- `says(x)`: whether the agent's latest reply states x (a reply check, for a question the user
  asked or a request the home cannot carry out): a number, written in it within the rounding of
  its digits ("21.5", "21,5" or "21" for 21.46; a state such as "21.46" reads as the number); a
  text, as words ("heat_cool" as "heat cool", any case); True, a yes ("yes", "indeed", ...:
  AFFIRMATIONS) with no negation ("no", "not", "can't", ...: NEGATIONS); False, a reply with a
  negation ("no problem" is none). False before any reply.
- `between(x, lo, hi)`, `approx(x, target, tol)`; comparisons (chained too), `in`, `not in`, `and`,
  `or`, `not`, `+ - * / // %`, unary `-`; literals: strings, numbers, True, False, None and
  tuples or lists of them (one and the same to a comparison); indexing with a literal
  (`attr("light.desk", "rgb_color")[0]`).

Entity ids, area ids and attribute names are string literals, so a condition's references are
known before it runs. A condition is a test: its top level and the operands of and/or/not are
comparisons or test functions (write `attr(x, "is_volume_muted") == True`).

None is a missing value: ordering comparisons (< <= > >=), `in`, between and approx involving None
are False instead of errors, arithmetic with None gives None, and == / != compare as in Python.
Other misuse (text compared with a number, an entity the home lacks) raises ConditionError.

Numbers are Python's, within the float range: an integer beyond ±1.8e308 (a literal, an operand
or a result of arithmetic) is a ConditionError, so that arithmetic stays cheap. Floats follow
IEEE 754 as in Python and Home Assistant's templates: they overflow to inf, `num()` reads "nan"
and "inf", NaN is unequal to everything (orderings, between and approx with it are False), and
approx(x, t, tol) is x == t or |x - t| <= tol (so equal infinities are close); only division
by zero is an error.

Limits: a condition has at most MAX_LENGTH characters, MAX_NODES expressions (literals, calls,
operations) and MAX_DEPTH levels of nesting; past one it is refused with a ConditionError that
names the limit. Compiling is linear in the text's length, and any bad input, of any type, is a
ConditionError.
"""

from __future__ import annotations

import ast
import operator
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from .domains import domain_of
from .errors import ConditionError
from .state import EMPTY, State
from .validation import shown, valid_entity_id

if TYPE_CHECKING:
    from .home import Home

# A compiled node: reads the home (and what else is given) and returns a value.
Fn = Callable[["Home", "Given"], Any]
Kind = Literal["text", "number", "test", "sequence", "none", "any"]

# Words that make a reply a no (says(False)), in the languages the flywheel speaks; a word
# ending in "n't" is one too.
NEGATIONS = frozenset(
    " ".join(
        (
            "no not none nothing never neither nor cannot unable nobody nowhere",  # English
            "nein nicht kein keine keinen nichts",  # German
            "non pas aucun aucune rien",  # French, Italian
            "ningún ninguna nada nunca",  # Spanish, Portuguese
            "nee niet geen",  # Dutch
            "nie żaden żadna brak",  # Polish
            "não nenhum nenhuma nessun nessuna",  # Portuguese, Italian
        )
    ).split(" ")
)
# Words that make a reply a yes (says(True), with no negation), in the same languages.
AFFIRMATIONS = frozenset(
    " ".join(
        (
            "yes yeah yep yup indeed correct",  # English
            "ja genau",  # German, Dutch
            "oui sí si sim tak certo esatto",  # French, Spanish, Italian, Portuguese, Polish
        )
    ).split(" ")
)
# Idioms with a negation word that say no no ("no problem": a yes, if anything).
_NO_NOS = re.compile(r"\b(no (problem|worries|doubt)|kein problem|pas de (problème|souci))\b")
_WORD = re.compile(r"[\w']+")
_NUMBER = re.compile(r"(?<![\w.,])-?\d+(?:[.,]\d+)?(?![\w])")

# What area(x).<quantity> reads: the fields of the area's RoomClimate.
AREA_QUANTITIES = ("temperature", "humidity", "illuminance", "co2", "pm25")

_USAGE = {
    "approx": 'approx(area("study").temperature, 21, 0.5)',
    "area": 'area("study").temperature',
    "attr": 'attr("light.kitchen", "brightness")',
    "between": 'between(num("sensor.study_temperature"), 20, 24)',
    "entity": 'entity("climate.bedroom").hvac_mode',
    "item": 'item("todo.shopping_list", "Milk")',
    "num": 'num("sensor.study_temperature")',
    "state": 'state("light.kitchen")',
    "says": 'says(state("cover.garage_door"))',
    "unchanged": 'unchanged("lock.front_door")',
    "was": 'was("light.kitchen", "brightness")',
}
_ARITY = {
    "approx": 3,
    "area": 1,
    "attr": 2,
    "between": 3,
    "entity": 1,
    "item": 2,
    "num": 1,
    "says": 1,
    "state": 1,
    "unchanged": 1,
    "was": 2,
}
_FUNCTIONS = ", ".join(_USAGE)
_NUMBERS = frozenset({int, float})
_EXAMPLE = 'state("light.kitchen") == "on"'
_TOO_LARGE = (
    f"an integer beyond ±{sys.float_info.max:.2g} is too large for a float, the range of a "
    "condition's numbers; use smaller numbers"
)

MAX_LENGTH = 4096
"""The most characters a condition's text may have."""
MAX_NODES = 500
"""The most expressions (literals, calls, operations) a condition may have."""
MAX_DEPTH = 50
"""The most levels a condition may nest."""
MAX_NUMBER = sys.float_info.max
"""The largest magnitude of an integer in a condition: the float range (about 1.8e308)."""
# Line breaks as Python's tokenizer counts lines (str.splitlines also splits at \f, \x1c...).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

_ORDERINGS: dict[type[ast.cmpop], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Lt: ("<", operator.lt),
    ast.LtE: ("<=", operator.le),
    ast.Gt: (">", operator.gt),
    ast.GtE: (">=", operator.ge),
    ast.In: ("in", lambda a, b: a in b),
    ast.NotIn: ("not in", lambda a, b: a not in b),
}
_EQUALITIES: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_ARITHMETIC: dict[type[ast.operator], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
    ast.FloorDiv: ("//", operator.floordiv),
    ast.Mod: ("%", operator.mod),
}
_OTHER_OPERATORS: dict[type[ast.operator], str] = {
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.BitAnd: "&",
    ast.BitOr: "|",
    ast.BitXor: "^",
    ast.LShift: "<<",
    ast.RShift: ">>",
}
_FORBIDDEN: dict[type[ast.AST], str] = {
    ast.Lambda: "lambda expressions are",
    ast.ListComp: "comprehensions are",
    ast.SetComp: "comprehensions are",
    ast.DictComp: "comprehensions are",
    ast.GeneratorExp: "generator expressions are",
    ast.NamedExpr: "assignment expressions (:=) are",
    ast.JoinedStr: "f-strings are",
    ast.IfExp: "conditional expressions (x if c else y) are",
    ast.Dict: "dicts are",
    ast.Set: "sets are",
    ast.Await: "await is",
    ast.Yield: "yield is",
    ast.YieldFrom: "yield is",
    ast.Starred: "starred arguments (*args) are",
    ast.Slice: "slices are",
}


@dataclass(frozen=True, slots=True)
class Given:
    """What a condition reads besides the home: the task's start states (for unchanged()) and
    the agent's latest reply (for says(); None before it has replied)."""

    start: Mapping[str, State]
    reply: str | None


NOTHING_GIVEN = Given(EMPTY, None)


@dataclass(frozen=True, slots=True)
class Condition:
    """A compiled goal condition: its text, the entities and areas it reads, and its test."""

    text: str
    entity_ids: tuple[str, ...]
    area_ids: tuple[str, ...]
    test: Callable[[Home, Given], bool] = field(repr=False, compare=False)
    reads_reply: bool = False  # whether it calls says()

    def holds(
        self, home: Home, start: Mapping[str, State] = EMPTY, reply: str | None = None
    ) -> bool:
        """Whether the condition holds in `home`; `start` (the task's start states) serves
        unchanged(), `reply` (the agent's latest) says(). Raises ConditionError when the home
        cannot answer it."""
        return self.test(home, Given(start, reply) if start or reply is not None else NOTHING_GIVEN)

    def validate(self, home: Home) -> None:
        """Raise ConditionError naming every entity and area referred to that `home` lacks."""
        entities = [entity_id for entity_id in self.entity_ids if entity_id not in home.entities]
        areas = [area_id for area_id in self.area_ids if area_id not in home.areas]
        if entities or areas:
            lacking = [f"entity {entity_id}" for entity_id in entities]
            lacking += [f"area {area_id!r}" for area_id in areas]
            raise ConditionError(
                f"Condition {self.text!r} refers to what the home lacks: {', '.join(lacking)}; "
                "use ids from the home's entity and area lists"
            )


def compile_condition(text: str) -> Condition:
    """Compile a condition once (cached by text); ConditionError names the position and problem.

    The type and length are checked before the cache, which holds the 128 conditions compiled
    last: under 50 MB for conditions at the limits (some 360 KB each), 1 MB for typical ones."""
    if not isinstance(text, str):
        raise ConditionError(
            f"A condition must be text (a str) such as {_EXAMPLE}, got {type(text).__name__}"
        )
    if len(text) > MAX_LENGTH:
        raise ConditionError(
            f"Condition {text[:60]!r}... has {len(text)} characters, over the limit of "
            f"{MAX_LENGTH}; split it into several conditions"
        )
    return _compile(text)


@lru_cache(maxsize=128)
def _compile(text: str) -> Condition:
    text = text.strip()
    if not text:
        raise ConditionError(f"A condition cannot be empty; write e.g. {_EXAMPLE}")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as err:
        raise _syntax_error(text, err) from None
    except UnicodeEncodeError as err:
        raise ConditionError(
            f"Condition {text!r} has a lone surrogate {text[err.start]!r} at character "
            f"{err.start + 1}, which is no text; write the character itself"
        ) from None
    except (RecursionError, MemoryError):
        # Python's parser gives up on deeply nested input with these rather than a SyntaxError.
        raise ConditionError(
            f"Condition {text[:80]!r}... is nested too deeply to parse; conditions nest at most "
            f"{MAX_DEPTH} levels"
        ) from None
    compiler = _Compiler(text)
    body = compiler.compile(tree.body)
    if body.kind != "test":
        raise compiler.error(tree.body, _not_a_test(compiler.source(tree.body)))
    return Condition(
        text, tuple(compiler.entity_ids), tuple(compiler.area_ids), body.fn, compiler.reads_reply
    )


def read_area(home: Home, area_id: str, quantity: str) -> float:
    """The area's `quantity` (temperature, humidity, illuminance, co2 or pm25) from its air."""
    room = home.rooms.get(area_id)
    if room is None:
        raise ConditionError(f"Area {area_id!r} not found; the home's areas: {sorted(home.areas)}")
    value: float = getattr(room, quantity)
    return value


@dataclass(frozen=True, slots=True)
class _Compiled:
    """A compiled node: its function, its static kind, and its value when it is a literal."""

    fn: Fn
    kind: Kind
    literal: bool = False
    value: Any = None


@dataclass(frozen=True, slots=True)
class _Where:
    """A position in a condition (a line, and a UTF-8 byte offset in it as the AST gives it),
    formatted only when an error names it: nodes share the text rather than each keeping a
    message, which keeps compiling linear in the condition's length."""

    text: str
    line: int
    offset: int

    def __str__(self) -> str:
        lines = _LINE_BREAK.split(self.text)
        start = lines[self.line - 1].encode()[: self.offset] if self.line <= len(lines) else b""
        column = len(start.decode(errors="replace")) + 1
        return f"Condition {self.text!r}, line {self.line}, column {column}"


def _literal(value: Any) -> _Compiled:
    kind: Kind
    if value is None:
        kind = "none"
    elif isinstance(value, bool):
        kind = "test"
    elif isinstance(value, str):
        kind = "text"
    elif isinstance(value, tuple):
        kind = "sequence"
    else:
        kind = "number"
    return _Compiled(lambda home, given: value, kind, literal=True, value=value)


class _Compiler:
    """Turns a whitelisted expression tree into closures, collecting the ids it refers to."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.entity_ids: dict[str, None] = {}
        self.area_ids: dict[str, None] = {}
        self.depth = 0
        self.nodes = 0
        self.reads_reply = False

    def error(self, node: ast.AST, problem: str, line: int = 0, offset: int = -1) -> ConditionError:
        """An error at `node` (or at `line`/`offset` when given) of the condition."""
        line = line or getattr(node, "lineno", 1)
        offset = offset if offset >= 0 else getattr(node, "col_offset", 0)
        return ConditionError(f"{_Where(self.text, line, offset)}: {problem}")

    def where(self, node: ast.expr) -> _Where:
        """Where `node` is, for errors at evaluation."""
        return _Where(self.text, node.lineno, node.col_offset)

    def source(self, node: ast.AST) -> str:
        """The condition's own text of a node, for messages."""
        return ast.get_source_segment(self.text, node) or ast.unparse(node)

    def compile(self, node: ast.AST) -> _Compiled:
        """Compile one node of the tree."""
        self.depth += 1
        self.nodes += 1
        if self.depth > MAX_DEPTH:
            raise self.error(node, f"the condition is nested deeper than {MAX_DEPTH} levels")
        if self.nodes > MAX_NODES:
            raise self.error(
                node,
                f"the condition has more than {MAX_NODES} expressions (literals, calls, "
                "operations); split it into several conditions",
            )
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            what = _FORBIDDEN.get(type(node), f"{type(node).__name__} expressions are")
            raise self.error(node, f"{what} not allowed in a condition")
        compiled: _Compiled = method(node)
        self.depth -= 1
        return compiled

    # --- literals and names --------------------------------------------------------------------

    def _Constant(self, node: ast.Constant) -> _Compiled:
        if type(node.value) is int and not -MAX_NUMBER <= node.value <= MAX_NUMBER:
            raise self.error(node, _TOO_LARGE)
        if node.value is None or isinstance(node.value, str | int | float):
            return _literal(node.value)
        raise self.error(
            node,
            f"{self.source(node)} is not a literal of the language; use strings, numbers, "
            "True, False or None",
        )

    def _Tuple(self, node: ast.Tuple | ast.List) -> _Compiled:
        items = [self.compile(item) for item in node.elts]
        for item, compiled in zip(node.elts, items, strict=True):
            if not compiled.literal:
                raise self.error(item, "lists and tuples hold literals only")
        return _literal(tuple(compiled.value for compiled in items))

    _List = _Tuple

    def _Name(self, node: ast.Name) -> _Compiled:
        if node.id.startswith("_"):
            raise self.error(node, f"names starting with '_' are not allowed: {node.id}")
        if node.id in _USAGE:
            raise self.error(node, f"{node.id} is a function; call it, e.g. {_USAGE[node.id]}")
        raise self.error(
            node, f"unknown name {node.id}; quote text ('{node.id}'), or use one of {_FUNCTIONS}"
        )

    # --- operators -----------------------------------------------------------------------------

    def _BoolOp(self, node: ast.BoolOp) -> _Compiled:
        word = "and" if isinstance(node.op, ast.And) else "or"
        fns = tuple(self._test(value, word) for value in node.values)
        if len(fns) == 2:
            first, second = fns
            if word == "and":
                return _Compiled(
                    lambda home, given: first(home, given) and second(home, given), "test"
                )
            return _Compiled(lambda home, given: first(home, given) or second(home, given), "test")

        if word == "and":

            def every(home: Home, given: Given) -> bool:
                return all(fn(home, given) for fn in fns)

            return _Compiled(every, "test")

        def any_(home: Home, given: Given) -> bool:
            return any(fn(home, given) for fn in fns)

        return _Compiled(any_, "test")

    def _test(self, node: ast.expr, word: str) -> Fn:
        compiled = self.compile(node)
        if compiled.kind != "test":
            raise self.error(
                node, f"the operands of {word} must be tests; {_not_a_test(self.source(node))}"
            )
        return compiled.fn

    def _UnaryOp(self, node: ast.UnaryOp) -> _Compiled:
        if isinstance(node.op, ast.Not):
            fn = self._test(node.operand, "not")
            return _Compiled(lambda home, given: not fn(home, given), "test")
        if not isinstance(node.op, ast.USub):
            raise self.error(node, "only the unary operators - and not are allowed")
        operand = self._number(node.operand, "-")
        if operand.literal:
            return _literal(-operand.value)
        negate = _arithmetic("-", operator.mul, self.where(node))
        value = operand.fn
        return _Compiled(lambda home, given: negate(-1, value(home, given)), "number")

    def _BinOp(self, node: ast.BinOp) -> _Compiled:
        found = _ARITHMETIC.get(type(node.op))
        if found is None:
            symbol = _OTHER_OPERATORS.get(type(node.op), type(node.op).__name__)
            raise self.error(node, f"the operator {symbol} is not allowed; use + - * / // %")
        symbol, op = found
        left, right = self._number(node.left, symbol).fn, self._number(node.right, symbol).fn
        apply = _arithmetic(symbol, op, self.where(node))
        return _Compiled(lambda home, given: apply(left(home, given), right(home, given)), "number")

    def _number(self, node: ast.expr, symbol: str) -> _Compiled:
        compiled = self.compile(node)
        if compiled.kind not in ("number", "any"):
            raise self.error(node, f"{symbol} works on numbers, not on {self.source(node)}")
        return compiled

    def _Compare(self, node: ast.Compare) -> _Compiled:
        operands = [node.left, *node.comparators]
        compiled = [self.compile(operand) for operand in operands]
        compares = []
        for index, op in enumerate(node.ops):
            left, right = compiled[index], compiled[index + 1]
            self._check_comparable(node, op, operands[index : index + 2], left, right)
            sequences = "sequence" in (left.kind, right.kind)
            compares.append(_comparison(op, self.where(node), sequences))
        first = compiled[0].fn
        if len(compares) == 1:
            compare, second = compares[0], compiled[1]
            if second.literal:
                value = second.value
                return _Compiled(lambda home, given: compare(first(home, given), value), "test")
            other = second.fn
            return _Compiled(
                lambda home, given: compare(first(home, given), other(home, given)), "test"
            )
        pairs = tuple(zip(compares, (item.fn for item in compiled[1:]), strict=True))

        def chain(home: Home, given: Given) -> bool:
            left = first(home, given)
            for compare, right_fn in pairs:
                right = right_fn(home, given)
                if not compare(left, right):
                    return False
                left = right
            return True

        return _Compiled(chain, "test")

    def _check_comparable(
        self, node: ast.Compare, op: ast.cmpop, pair: list[ast.expr], *kinds: _Compiled
    ) -> None:
        if isinstance(op, ast.Is | ast.IsNot):
            raise self.error(node, "is / is not are not allowed; use == or !=")
        left, right = kinds
        if isinstance(op, ast.In | ast.NotIn):
            if right.kind in ("number", "test", "none"):
                raise self.error(
                    pair[1], f"in needs a list, tuple or text, not {self.source(pair[1])}"
                )
            return
        for text, other in ((left, right), (right, left)):
            if text.kind == "text" and other.kind in ("number", "test"):
                text_node, other_node = pair if text is left else pair[::-1]
                raise self.error(
                    other_node,
                    f"{self.source(text_node)} is text and {self.source(other_node)} is not; "
                    'compare with text such as "on", or read a number with num("sensor.x")',
                )

    # --- reading the home ----------------------------------------------------------------------

    def _Call(self, node: ast.Call) -> _Compiled:
        name = self._function(node)
        if name in ("entity", "area"):
            raise self.error(node, f"{name}() is read through an attribute, e.g. {_USAGE[name]}")
        if name in ("between", "approx"):
            return self._range_test(node, name)
        if name == "says":
            self.reads_reply = True
            told = self.compile(node.args[0]).fn
            return _Compiled(lambda home, given: says_value(given.reply, told(home, given)), "test")
        entity_id = self._entity_id(node)
        if name == "attr":
            return _attribute(
                entity_id, self._string(node.args[1], "the attribute name", '"brightness"')
            )
        if name == "item":
            return _item(entity_id, self._string(node.args[1], "the item's name", '"Milk"'))
        if name == "was":
            return _was(entity_id, self._string(node.args[1], "the attribute name", '"brightness"'))
        if name == "state":
            return _Compiled(_state(entity_id), "text")
        if name == "num":
            read = _state(entity_id)
            return _Compiled(lambda home, given: _number(read(home, given)), "number")
        return _Compiled(_unchanged(entity_id), "test")

    def _function(self, node: ast.Call) -> str:
        """The name of a whitelisted function called with the right number of plain arguments."""
        if not isinstance(node.func, ast.Name):
            self.compile(node.func)
            raise self.error(node, f"only the condition functions can be called: {_FUNCTIONS}")
        name = node.func.id
        if name.startswith("_"):
            raise self.error(node, f"names starting with '_' are not allowed: {name}")
        if name not in _USAGE:
            raise self.error(node, f"{name}() is not allowed; the functions are {_FUNCTIONS}")
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                raise self.error(arg, f"starred arguments are not allowed; e.g. {_USAGE[name]}")
        if node.keywords:
            raise self.error(
                node.keywords[0], f"{name}() takes no keyword arguments; e.g. {_USAGE[name]}"
            )
        if len(node.args) != _ARITY[name]:
            raise self.error(
                node,
                f"{name}() takes {_ARITY[name]} argument{'s' if _ARITY[name] > 1 else ''}, "
                f"got {len(node.args)}; e.g. {_USAGE[name]}",
            )
        return name

    def _string(self, node: ast.expr, what: str, example: str) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
            return node.value
        raise self.error(node, f"{what} must be a quoted literal such as {example}")

    def _entity_id(self, node: ast.Call) -> str:
        entity_id = self._string(node.args[0], "the entity id", '"light.kitchen"')
        if not valid_entity_id(entity_id):
            raise self.error(
                node.args[0], f'{entity_id!r} is not an entity id; ids look like "light.kitchen"'
            )
        self.entity_ids[entity_id] = None
        return entity_id

    def _range_test(self, node: ast.Call, name: str) -> _Compiled:
        args = [self.compile(arg) for arg in node.args]
        for arg, compiled in zip(node.args, args, strict=True):
            if compiled.kind not in ("number", "any"):
                raise self.error(arg, f"{name}() compares numbers, not {self.source(arg)}")
        if name == "approx" and args[2].literal and args[2].value < 0:
            raise self.error(node.args[2], f"the tolerance must be >= 0, got {args[2].value}")
        where = self.where(node)
        test = _between if name == "between" else _approx
        value, low, high = (arg.fn for arg in args)
        return _Compiled(
            lambda home, given: test(
                where, value(home, given), low(home, given), high(home, given)
            ),
            "test",
        )

    def _Attribute(self, node: ast.Attribute) -> _Compiled:
        source = node.value
        owner = (
            source.func.id
            if isinstance(source, ast.Call) and isinstance(source.func, ast.Name)
            else None
        )
        if owner not in ("entity", "area"):
            self.compile(source)
        if node.attr.startswith("_"):
            raise self.error(
                node,
                f"attribute names starting with '_' are not allowed: {node.attr}",
                node.end_lineno or node.lineno,
                (node.end_col_offset or 0) - len(node.attr.encode()),
            )
        if owner == "entity":
            assert isinstance(source, ast.Call)
            self._function(source)
            entity_id = self._entity_id(source)
            if node.attr == "state":
                return _Compiled(_state(entity_id), "text")
            return _attribute(entity_id, node.attr)
        if owner == "area":
            assert isinstance(source, ast.Call)
            self._function(source)
            return self._area(source, node.attr)
        raise self.error(node, "attributes can only be read from entity(...) and area(...)")

    def _area(self, node: ast.Call, quantity: str) -> _Compiled:
        area_id = self._string(node.args[0], "the area id", '"study"')
        if quantity not in AREA_QUANTITIES:
            raise self.error(
                node, f"areas have no {quantity}; read one of {', '.join(AREA_QUANTITIES)}"
            )
        self.area_ids[area_id] = None
        return _Compiled(lambda home, given: read_area(home, area_id, quantity), "number")

    def _Subscript(self, node: ast.Subscript) -> _Compiled:
        container = self.compile(node.value)
        if container.kind not in ("sequence", "any", "text"):
            raise self.error(node, f"{self.source(node.value)} cannot be indexed")
        index = self.compile(node.slice)
        if not (index.literal and isinstance(index.value, int | str)):
            raise self.error(node.slice, "the index must be a literal number or string, e.g. [0]")
        key, read = index.value, container.fn
        where = self.where(node)

        def item(home: Home, given: Given) -> Any:
            value = read(home, given)
            try:
                return value[key]
            except LookupError:
                return None
            except TypeError:
                if value is None:
                    return None
                raise ConditionError(
                    f"{where}: {_show(value)} cannot be indexed with {key!r}"
                ) from None

        return _Compiled(item, "any")


def _state(entity_id: str) -> Fn:
    def state(home: Home, given: Given) -> str:
        current = home.states.get(entity_id)
        if current is None:
            raise _missing(entity_id)
        return current.state

    return state


def _attribute(entity_id: str, name: str) -> _Compiled:
    def attribute(home: Home, given: Given) -> Any:
        current = home.states.get(entity_id)
        if current is None:
            raise _missing(entity_id)
        return current.attributes.get(name)

    return _Compiled(attribute, "any")


def _item(entity_id: str, name: str) -> _Compiled:
    def item(home: Home, given: Given) -> Any:
        current = home.states.get(entity_id)
        if current is None:
            raise _missing(entity_id)
        contents = domain_of(current.domain).contents
        for held in current.hidden.get(contents, ()) if contents else ():
            if name in (held.get("uid"), held.get("summary")):
                return held.get("status")
        return None

    return _Compiled(item, "any")


def _unchanged(entity_id: str) -> Fn:
    def unchanged(home: Home, given: Given) -> bool:
        current = home.states.get(entity_id)
        if current is None:
            raise _missing(entity_id)
        before = _start(given, entity_id, "unchanged")
        return current is before or (
            current.state == before.state and current.attributes == before.attributes
        )

    return unchanged


def _was(entity_id: str, name: str) -> _Compiled:
    def was(home: Home, given: Given) -> Any:
        if entity_id not in home.states:
            raise _missing(entity_id)
        return _start(given, entity_id, "was").attributes.get(name)

    return _Compiled(was, "any")


def _start(given: Given, entity_id: str, function: str) -> State:
    """The entity's state at the task's start, which unchanged() and was() compare with."""
    before = given.start.get(entity_id)
    if before is None:
        raise ConditionError(
            f"{function}({entity_id!r}) needs the task's start state of {entity_id}; "
            "evaluate with the start snapshot's states"
        )
    return before


def says_value(reply: str | None, value: Any) -> bool:
    """Whether `reply` states `value` (says() in the module's docstring)."""
    if reply is None or value is None:
        return False
    text = reply.casefold()
    if isinstance(value, bool):
        words = _WORD.findall(_NO_NOS.sub(" ", text))
        negative = any(word in NEGATIONS or word.endswith("n't") for word in words)
        if value:
            return not negative and any(word in AFFIRMATIONS for word in words)
        return negative
    number = _number(value) if isinstance(value, str) else value
    if isinstance(number, int | float) and number == number:
        return any(_close(written, number) for written in _NUMBER.findall(text))
    if not isinstance(value, str):
        return False
    wanted = " ".join(_WORD.findall(value.casefold().replace("_", " ")))
    return bool(wanted) and f" {wanted} " in f" {' '.join(_WORD.findall(text))} "


def _close(written: str, value: float) -> bool:
    """Whether a number written in a reply is `value` within the rounding of its digits."""
    point = written.replace(",", ".")
    decimals = len(point.partition(".")[2])
    return bool(abs(float(point) - value) <= 0.5 * 10**-decimals + 1e-9)


def _missing(entity_id: str) -> ConditionError:
    return ConditionError(
        f"Entity {entity_id} not found in the home; fix the condition's entity id"
    )


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _comparison(op: ast.cmpop, where: _Where, sequences: bool) -> Callable[[Any, Any], bool]:
    """A comparison where None makes orderings and `in` False, and other type clashes errors.

    Against a literal sequence, lists compare as tuples: Home Assistant keeps some attributes as
    lists (hvac_modes) and others as tuples (rgb_color), and a condition should not care which.
    """
    compare = _compare(op, where)
    if not sequences:
        return compare
    return lambda left, right: compare(_as_tuple(left), _as_tuple(right))


def _as_tuple(value: Any) -> Any:
    return tuple(value) if type(value) is list else value


def _compare(op: ast.cmpop, where: _Where) -> Callable[[Any, Any], bool]:
    equality = _EQUALITIES.get(type(op))
    if equality is not None:
        return equality
    symbol, ordering = _ORDERINGS[type(op)]

    def compare(left: Any, right: Any) -> bool:
        try:
            return bool(ordering(left, right))
        except TypeError:
            if left is None or right is None:
                return False
            raise ConditionError(
                f"{where}: cannot compare {_show(left)} {symbol} {_show(right)}; states are text, "
                'read a number with num("sensor.x")'
            ) from None

    return compare


def _arithmetic(
    symbol: str, op: Callable[[Any, Any], Any], where: _Where
) -> Callable[[Any, Any], Any]:
    """Arithmetic on numbers only (no text repetition or formatting); None in, None out.

    Integer operands and results stay within the float range, so no operation gets costly."""

    def apply(left: Any, right: Any) -> Any:
        if type(left) in _NUMBERS and type(right) in _NUMBERS:
            try:
                return _bounded(where, op(_bounded(where, left), _bounded(where, right)))
            except ZeroDivisionError:
                raise ConditionError(f"{where}: {symbol} by zero, which has no value") from None
            except ArithmeticError as err:
                raise ConditionError(f"{where}: {err}") from None
        if left is None or right is None:
            return None
        raise ConditionError(
            f"{where}: {symbol} works on numbers, got {_show(left)} and {_show(right)}; read a "
            'number with num("sensor.x")'
        )

    return apply


def _bounded(where: _Where, value: Any) -> Any:
    """`value`, unless it is an integer beyond the float range: Python's integers have no bound,
    and arithmetic on huge ones takes time and memory without limit."""
    if type(value) is int and not -MAX_NUMBER <= value <= MAX_NUMBER:
        raise ConditionError(f"{where}: {_TOO_LARGE}")
    return value


def _numbers(where: _Where, name: str, *values: Any) -> bool:
    """Whether all values are numbers; False when one is None; an error for anything else."""
    for value in values:
        if type(value) not in _NUMBERS:
            if value is None:
                return False
            raise ConditionError(f"{where}: {name}() compares numbers, got {_show(value)}")
        _bounded(where, value)
    return True


def _between(where: _Where, value: Any, low: Any, high: Any) -> bool:
    return _numbers(where, "between", value, low, high) and bool(low <= value <= high)


def _approx(where: _Where, value: Any, target: Any, tolerance: Any) -> bool:
    """Within `tolerance` of `target`; equal infinities are too (their difference is NaN)."""
    return _numbers(where, "approx", value, target, tolerance) and bool(
        value == target or abs(value - target) <= tolerance
    )


def _show(value: Any) -> str:
    """A value for a message, cut at 80 characters (attributes can be long)."""
    return shown(value, 80)


def _not_a_test(source: str) -> str:
    return f'{source} is a value, not a test; compare it, e.g. {source} == "on"'


def _syntax_error(text: str, err: SyntaxError) -> ConditionError:
    lines = _LINE_BREAK.split(text)
    line = min(err.lineno or len(lines), len(lines))
    column = err.offset if err.offset and err.offset > 0 else len(lines[line - 1]) + 1
    return ConditionError(
        f"Condition {text!r}, line {line}, column {column}: {err.msg}; a condition is one "
        "expression (no statements or imports), wrapped in parentheses when it spans lines"
    )
