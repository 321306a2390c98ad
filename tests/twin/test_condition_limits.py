"""Goal conditions within their stated limits: compiling is linear, numbers are bounded, and any bad
input (of any size, nesting, type or text) is a ConditionError, never another exception."""

from __future__ import annotations

import itertools
from dataclasses import replace
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.twin.bounded import run_bounded
from twin.conditions import MAX_DEPTH, MAX_LENGTH, MAX_NODES, compile_condition
from twin.errors import ConditionError
from twin.home import Home
from twin.homemaker import make_home
from twin.registry import EntityEntry
from twin.verifier import MAX_CONDITIONS, Verifier

BIG = 10**5000  # more digits than Python turns into text
ODD_ATTRIBUTES = {
    "big": BIG,
    "bigs": [BIG],
    "long": "x" * 100_000,
    "nan": float("nan"),
    "inf": float("inf"),
    "nested": [[1, [2, None]], {"a": (1, 2)}],
}
# Sensors whose states read as non-finite numbers, and one carrying odd attributes.
ODD_SENSORS = {"sensor.nan": "nan", "sensor.inf": "inf", "sensor.minus_inf": "-inf"}
ODD = "sensor.odd"
# The largest integer within the float range, as a literal.
LARGEST = str(int(1.7e308))


def odd_home() -> Home:
    """The studio of seed 11, with non-finite sensors and an entity with odd attributes."""
    home = make_home(11, "studio")
    for entity_id, state in ODD_SENSORS.items():
        home.add_entity(EntityEntry(entity_id, entity_id, area_id="studio"), state)
    home.add_entity(EntityEntry(ODD, "Odd", area_id="studio"), "on")
    home.states[ODD] = replace(home.states[ODD], attributes=ODD_ATTRIBUTES)
    return home


@cache
def shared_home() -> Home:
    """One odd home for the property tests, which only read it."""
    return odd_home()


def outcome(home: Home, text: Any) -> bool | str:
    """The condition's value in `home`, or "refused" for a ConditionError (nothing else)."""
    try:
        result = compile_condition(text).holds(home, home.snapshot().states)
    except ConditionError:
        return "refused"
    assert type(result) is bool
    return result


def refused(text: Any) -> str:
    with pytest.raises(ConditionError) as caught:
        compile_condition(text).holds(shared_home(), shared_home().snapshot().states)
    return str(caught.value)


# --- size: length, expressions and nesting --------------------------------------------------------


def test_a_condition_over_the_length_limit_is_refused_with_the_limit() -> None:
    text = " < ".join(["1"] * 20000)
    message = refused(text)
    assert f"has {len(text)} characters, over the limit of {MAX_LENGTH}" in message
    assert len(message) < 200
    compile_condition(("1 < 2 " + " " * MAX_LENGTH)[:MAX_LENGTH])


def test_a_condition_over_the_expression_limit_is_refused_with_the_limit() -> None:
    text = "<".join(["1"] * (MAX_NODES + 1))
    assert len(text) <= MAX_LENGTH
    assert f"more than {MAX_NODES} expressions" in refused(text)
    assert compile_condition("<".join(["1"] * (MAX_NODES - 1))).holds(Home()) is False


def test_compiling_is_linear_in_the_length_without_the_limit() -> None:
    """Each comparison once kept a copy of the whole text (20,000 of them took 1.5 GB); with the
    length limit lifted, compiling that condition takes a few MB."""
    done = run_bounded(
        "compile_condition(' < '.join(['1'] * 20000)).holds(None)",
        setup="""
            import twin.conditions
            from twin.conditions import compile_condition
            twin.conditions.MAX_LENGTH = twin.conditions.MAX_NODES = 10**6
        """,
        memory_mb=200,
    )
    assert (done.error, done.result) == (None, "False")
    assert done.cpu_s < 30


@pytest.mark.parametrize(
    "text",
    [
        "not " * 1000 + "True",
        "-" * 4000 + "1 == 1",
        "(" * 1000 + "1" + ")" * 1000,
        "[" * 1000 + "]" * 1000,
        'attr("light.studio_lamp", "hvac_modes")' + "[0]" * 1000 + " == 1",
        'entity("light.studio_lamp")' + ".x" * 1000 + " == 1",
        "f" + "()" * 2000,
        "1" + " + 1" * 1000 + " > 1",
    ],
)
def test_deep_nesting_is_refused_as_too_deep(text: str) -> None:
    assert len(text) <= MAX_LENGTH
    message = refused(text)
    assert "nested" in message
    assert f"{MAX_DEPTH} levels" in message or "too many nested parentheses" in message


# --- numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("9**9**9 > 1", "the operator ** is not allowed"),
        ("10**10**8 > 1", "the operator ** is not allowed"),
        ("1 << 10**8 > 1", "the operator << is not allowed"),
        # Integer literals beyond the float range, in any base or sign.
        ("1" + "0" * 400 + " > 1", "too large for a float"),
        ("-" + "9" * 4000 + " < 1", "too large for a float"),
        ("0x" + "f" * 4000 + " > 1", "too large for a float"),
        ("approx(1, 2, -0x" + "f" * 300 + ")", "too large for a float"),
        # Arithmetic whose integer result leaves it.
        (f"{LARGEST} * 10 > 1", "too large for a float"),
        (f"{LARGEST} + {LARGEST} > 1", "too large for a float"),
        (f"-{LARGEST} - {LARGEST} < 1", "too large for a float"),
        (" * ".join([LARGEST[:300]] * 13) + " > 1", "too large for a float"),
        # Integers from the home beyond it, in arithmetic, tests and messages.
        (f'attr("{ODD}", "big") + 1 > 1', "too large for a float"),
        (f'-attr("{ODD}", "big") < 1', "too large for a float"),
        (f'approx(attr("{ODD}", "big"), 1.5, 1)', "too large for a float"),
        (f'between(attr("{ODD}", "big"), 1, 2)', "too large for a float"),
        (f'attr("{ODD}", "big") < "a"', "cannot compare a value too large to show < 'a'"),
        (f'attr("{ODD}", "bigs") < 1', "cannot compare a value too large to show < 1"),
        (f'attr("{ODD}", "big")[0] == 1', "a value too large to show cannot be indexed"),
        (f'attr("{ODD}", "long") * 2 == 1', "got 'xxxxxxxx"),
        (f"{LARGEST}.0 * 10 / 0 > 1", "/ by zero"),
        ("1e999 % 0.0 > 1", "% by zero"),
    ],
)
def test_numbers_stay_within_the_float_range(text: str, problem: str) -> None:
    message = refused(text)
    assert problem in message
    assert len(message) < len(text) + 400  # values are shown cut short


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (f"{LARGEST} > 1", True),
        (f"{LARGEST} - {LARGEST} == 0", True),
        (f"-{LARGEST} * 1 < 0", True),
        (f"approx({LARGEST}, 1.7e308, 1)", True),
        (f"approx({LARGEST}, -1.7e308, 1)", False),
        (f'between(attr("{ODD}", "nested")[0][0], 0, {LARGEST})', True),
        # Floats overflow to inf, as in Python and Home Assistant's templates.
        ("1e308 * 10 == 1e999", True),
        ("1e999 > 1e308", True),
        ("-1e999 < -1e308", True),
        ('num("sensor.inf") == 1e999', True),
        ('num("sensor.minus_inf") == -1e999', True),
        ('num("sensor.inf") - num("sensor.inf") == 0', False),
        # NaN is unequal to everything and ordered with nothing; nothing raises.
        ('num("sensor.nan") == num("sensor.nan")', False),
        ('num("sensor.nan") != num("sensor.nan")', True),
        ('num("sensor.nan") < 1', False),
        ('num("sensor.nan") >= 1', False),
        ('1 <= num("sensor.nan") <= 2', False),
        ('num("sensor.nan") in (1, 2)', False),
        ('num("sensor.nan") + 1 > 0', False),
        ("1e999 - 1e999 < 1", False),
        ("1e999 % 2 == 1e999 % 2", False),
        (f'attr("{ODD}", "nan") == attr("{ODD}", "nan")', False),
        (f'attr("{ODD}", "nan") > 0', False),
        ('between(num("sensor.nan"), -1e999, 1e999)', False),
        ('between(num("sensor.inf"), 0, 1e999)', True),
        ('approx(num("sensor.nan"), 0, 1e999)', False),
        ('approx(0, num("sensor.nan"), 1)', False),
        ('approx(1, 1, num("sensor.nan"))', True),
        ('approx(num("sensor.inf"), 1e999, 0)', True),
        ('approx(num("sensor.inf"), num("sensor.minus_inf"), 1e999)', True),
        ('approx(num("sensor.inf"), 1e308, 1)', False),
        ("approx(1e308, -1e308, 1e999)", True),
        ("approx(1e308, -1e308, 1e308)", False),
    ],
)
def test_huge_and_non_finite_numbers_are_defined(text: str, expected: bool) -> None:
    assert outcome(shared_home(), text) is expected


# --- types and text -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [None, 1, 1.5, True, b"1 < 2", ["1 < 2"], ("1 < 2",), {"1 < 2": 1}, {"1 < 2"}, object()],
)
def test_a_condition_that_is_not_text_is_refused(value: Any) -> None:
    assert "must be text (a str) such as state(" in refused(value)
    with pytest.raises(ConditionError, match=f"got {type(value).__name__}"):
        Verifier(shared_home(), [value])


@pytest.mark.parametrize(
    "conditions",
    [None, 1, "1 < 2", b"1 < 2", {"1 < 2": True}, object()],
)
def test_conditions_that_are_not_a_list_are_refused(conditions: Any) -> None:
    with pytest.raises(ConditionError, match="must be a list of condition texts"):
        Verifier(shared_home(), conditions)


def test_the_verifier_needs_a_home() -> None:
    with pytest.raises(ConditionError, match="on a twin Home, got NoneType"):
        Verifier(None, ["1 < 2"])  # type: ignore[arg-type]
    verifier = Verifier(shared_home(), ["1 < 2"])
    with pytest.raises(ConditionError, match="on a twin Home, got dict"):
        verifier.step({})  # type: ignore[arg-type]


def test_the_verifier_checks_at_most_its_limit_of_conditions() -> None:
    assert len(Verifier(shared_home(), ["1 < 2"] * MAX_CONDITIONS).conditions) == MAX_CONDITIONS
    with pytest.raises(ConditionError, match=f"at most {MAX_CONDITIONS} conditions"):
        Verifier(shared_home(), ["1 < 2"] * (MAX_CONDITIONS + 1))
    with pytest.raises(ConditionError, match=f"at most {MAX_CONDITIONS} conditions"):
        Verifier(shared_home(), itertools.repeat("1 < 2"))
    assert (
        Verifier(shared_home(), (text for text in ["1 < 2", "2 < 1"])).step(shared_home()).reward
        == 0
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"\ud800" == "x"', "lone surrogate '\\ud800' at character 2"),
        ('state("light.studio_lamp") == "\udfff"', "lone surrogate"),
        ("1 == 1\x00", "null bytes"),
        ("\ufeff1 == 1", "invalid non-printable character U+FEFF"),
        ("1 ==\u2028 1", "invalid non-printable character U+2028"),
        # Python reads compatibility forms of names as the plain ones (NFKC).
        ("_\uff3fclass__ == 1", "'_' are not allowed: __class__"),
        # Only \n and \r end lines, as for Python's tokenizer (not \x1c or \f).
        ('"\x1c" == "x" or getattr(1, "x")', "line 1, column 15: getattr() is not allowed"),
        ('(1 == 1\x0c or getattr(1, "x"))', "line 1, column 13: getattr() is not allowed"),
        ('"' + "a" * MAX_LENGTH + '" == "a"', f"over the limit of {MAX_LENGTH}"),
    ],
)
def test_odd_text_is_refused_with_a_clear_reason(text: str, expected: str) -> None:
    assert expected in refused(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('\uff53\uff54\uff41\uff54\uff45("light.studio_lamp") == "on"', True),  # NFKC: state
        ('"€" in "a€b"', True),
        ('"' + "a" * (MAX_LENGTH - 10) + '" == "a"', False),
        (f'"xx" in attr("{ODD}", "long")', True),
    ],
)
def test_unicode_and_long_text_work(text: str, expected: bool) -> None:
    assert outcome(shared_home(), text) is expected


# --- a hostile corpus in bounded memory -----------------------------------------------------------

SIZES = (MAX_LENGTH - 64, 1_000_000)  # prefixes and suffixes add at most 56 characters
HOSTILE = {
    "chain": lambda n: " < ".join(["1"] * (n // 4)),
    "and": lambda n: " and ".join(["1 < 2"] * (n // 10)),
    "nots": lambda n: "not " * (n // 4) + "True",
    "minus": lambda n: "-" * n + "1 > 0",
    "parens": lambda n: "(" * (n // 2) + "1" + ")" * (n // 2) + " > 0",
    "lists": lambda n: "[" * (n // 2) + "]" * (n // 2) + " == 1",
    "sum": lambda n: "1" + " + 1" * (n // 4) + " > 0",
    "balanced": lambda n: _balanced(n),
    "index": lambda n: f'attr("{ODD}", "nested")' + "[0]" * (n // 3) + " == 1",
    "tuple": lambda n: "1 in (" + ", ".join(["1.5"] * (n // 5)) + ")",
    "string": lambda n: '"' + "ab" * (n // 2) + '" == "ab"',
    "in_string": lambda n: '"' + "a" * (n // 2) + f'" in attr("{ODD}", "long")',
    "digits": lambda n: "9" * n + " > 1",
    "hex": lambda n: "0x" + "f" * n + " > 1",
    "float": lambda n: "1" * n + ".5 > 1",
    "product": lambda n: " * ".join([LARGEST[:300]] * (n // 303)) + " > 1",
    "calls": lambda n: " and ".join([f'approx(num("sensor.nan"), {LARGEST}, 1e999)'] * (n // 350)),
    "attrs": lambda n: " or ".join([f'attr("{ODD}", "big") < "a"'] * (n // 36)),
    "unicode": lambda n: '"' + "\U0001f600é" * (n // 2) + '" == "a"',
    "surrogates": lambda n: '"' + "\ud800" * n + '" == "a"',
    "lines": lambda n: "(1 < 2\n" + " and 1 < 2\n" * (n // 11) + ")",
    "garbage": lambda n: "(*[{" * (n // 4),
    "newlines": lambda n: "\n" * n + "1 < 2",
}


def _balanced(n: int) -> str:
    """(1 + 1) * (1 + 1) ... nested as a balanced tree of about n characters."""
    text = "1"
    while len(text) * 2 + 5 <= n:
        text = f"({text} * {text})"
    return text + " > 0"


def test_a_hostile_corpus_compiles_in_bounded_memory_and_time() -> None:
    """Conditions up to 1 MB each: each is a result or a ConditionError, compiled in a child
    whose address space is capped at 200 MB more than the home and corpus take."""
    done = run_bounded(
        "check()",
        setup="""
            from tests.twin.test_condition_limits import HOSTILE, SIZES, odd_home
            from tests.twin.test_condition_limits import outcome as evaluate
            from twin.conditions import MAX_LENGTH
            home = odd_home()
            corpus = {(name, size): make(size) for name, make in HOSTILE.items() for size in SIZES}
            def check():
                problems = []
                for (name, size), text in corpus.items():
                    try:
                        result = evaluate(home, text)
                    except BaseException as err:
                        result = f"{type(err).__name__}: {str(err)[:100]}"
                    if result not in (True, False, "refused") or (
                        len(text) > MAX_LENGTH and result != "refused"
                    ):
                        problems.append((name, size, result))
                return len(corpus), problems
        """,
        memory_mb=200,
    )
    assert (done.error, done.result) == (None, repr((len(HOSTILE) * len(SIZES), [])))
    assert done.cpu_s < 60


# --- properties -----------------------------------------------------------------------------------

ENTITY_IDS = ("light.studio_lamp", "climate.thermostat", ODD, *ODD_SENSORS, "switch.gone", "x")
ATTRIBUTES = ("brightness", "hvac_modes", "friendly_name", *ODD_ATTRIBUTES, "absent", "_x")
AREAS = ("studio", "attic", "")
QUANTITIES = ("temperature", "humidity", "co2", "noise", "__class__")
OPERATORS = ("+", "-", "*", "/", "//", "%", "**", "<<", "&", "@")
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=", "in", "not in", "is")

literals = st.one_of(
    st.integers(-(10**400), 10**400).map(repr),
    st.floats().map(lambda x: repr(x).replace("inf", "1e999").replace("nan", "(1e999 - 1e999)")),
    st.text(max_size=8).map(repr),
    st.sampled_from(["None", "True", "False", "()", "[1, 2]", "(1, 'a', None)", LARGEST]),
)
reads = st.one_of(
    st.sampled_from(ENTITY_IDS).map(lambda e: f'state("{e}")'),
    st.sampled_from(ENTITY_IDS).map(lambda e: f'num("{e}")'),
    st.sampled_from(ENTITY_IDS).map(lambda e: f'unchanged("{e}")'),
    st.tuples(st.sampled_from(ENTITY_IDS), st.sampled_from(ATTRIBUTES)).map(
        lambda pair: f'attr("{pair[0]}", "{pair[1]}")'
    ),
    st.tuples(st.sampled_from(ENTITY_IDS), st.sampled_from(ATTRIBUTES)).map(
        lambda pair: f'entity("{pair[0]}").{pair[1]}'
    ),
    st.tuples(st.sampled_from(AREAS), st.sampled_from(QUANTITIES)).map(
        lambda pair: f'area("{pair[0]}").{pair[1]}'
    ),
)


def _grow(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(inner, st.sampled_from(OPERATORS + COMPARISONS), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(inner, st.sampled_from(("and", "or")), inner).map(
            lambda t: f"{t[0]} {t[1]} {t[2]}"
        ),
        st.tuples(st.sampled_from(("not ", "-", "+", "~")), inner).map("".join),
        st.tuples(st.sampled_from(("between", "approx")), inner, inner, inner).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]}, {t[3]})"
        ),
        st.tuples(inner, literals).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.lists(inner, max_size=3).map(lambda items: f"({', '.join(items)},)"),
    )


expressions = st.recursive(literals | reads, _grow, max_leaves=12)
TOKENS = (
    *OPERATORS,
    *COMPARISONS,
    "and",
    "or",
    "not",
    "(",
    ")",
    "[",
    "]",
    ",",
    ".",
    ":",
    "lambda",
    "state",
    "num",
    "attr",
    "entity",
    "area",
    "between",
    "approx",
    "unchanged",
    '"light.studio_lamp"',
    f'"{ODD}"',
    '"big"',
    "temperature",
    "1",
    "1e999",
    LARGEST,
    "None",
    "\n",
    "\\",
    "#",
    "é",
    "\ud800",
    "\x00",
)
tokens = st.lists(st.sampled_from(TOKENS), max_size=25).map(" ".join)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(expressions, tokens, st.text(max_size=60)))
def test_any_text_gives_a_bool_or_a_condition_error(text: str) -> None:
    assert outcome(shared_home(), text) in (True, False, "refused")


@settings(max_examples=200, deadline=None)
@given(expressions)
def test_any_expression_tree_gives_a_bool_or_a_condition_error(text: str) -> None:
    for condition in (text, f"{text} == 1", f"not {text}", f"approx({text}, 0, 1e999)"):
        assert outcome(shared_home(), condition) in (True, False, "refused")
