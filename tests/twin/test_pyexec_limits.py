"""The pyexec sandbox meters per operation: the total a format, join or repeat would build, big-int
work, sorting and slow builtins are counted or refused before they run, so no snippet exhausts the
machine; every way out is ok or a typed error, and a failing run changes nothing."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.twin.bounded import run_bounded
from twin.home import Home
from twin.pyexec import DEFAULT_LIMITS, WORK_PER_STEP, ExecResult, SandboxLimits, run
from twin.registry import EntityEntry
from twin.tools import pyexec

KETTLE = "switch.kettle"
TURN_ON_KETTLE = f'call_service("switch", "turn_on", entity_id="{KETTLE}")\n'
# What a run may end with: its own typed errors, the home's, or Python's (code_error).
TYPED = {
    "code_error",
    "syntax_error",
    "restricted_code",
    "step_limit",
    "time_limit",
    "memory_limit",
    "entity_not_found",
    "service_not_found",
    "invalid_data",
    "target_not_found",
}
# The largest ints one operation may build (about SandboxLimits.size bits), and their charges.
BIG_INTS = "x = 3 ** 63000\ny = 3 ** 31500\n"  # 99,854 and 49,927 bits: 3,329 and 1,665 digits
CJK = "'%c' * 2000 % tuple(range(0x4E00, 0x4E00 + 2000))"  # punycode: 1.8 s, 15,000: 86 s


def kettle_home() -> Home:
    home = Home("SandboxLimits home")
    home.add_entity(EntityEntry(KETTLE, "Kettle"), "off")
    return home


@pytest.fixture
def home() -> Home:
    return kettle_home()


def unchanged(home: Home, code: str, limits: SandboxLimits = DEFAULT_LIMITS) -> ExecResult:
    """Run code that must fail after turning the kettle on, and check it left the home as it was."""
    states = dict(home.states)
    result = run(TURN_ON_KETTLE + code, home, limits)
    assert not result.ok
    assert result.calls  # the kettle was turned on, then undone
    assert home.states == states
    return result


# --- the observed examples -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "error_code", "message"),
    [
        (
            "t = '{:99999}' * 6000\nt.format(*[0] * 6000)",
            "memory_limit",
            "The formatted text would have 199998 characters",
        ),
        (
            "('%99999d' * 6000) % tuple(range(6000))",
            "memory_limit",
            "The formatted text would have 199998 characters",
        ),
        (
            "'%(a(b)c)600000000s' % {'a(b)c': 1}",
            "memory_limit",
            "Padding to that width would have 600000000 characters",
        ),
        ("('\u4e2d' * 15000).encode('punycode')", "code_error", "got 'punycode'"),
        (f"({CJK}).encode('punycode')", "code_error", "got 'punycode'"),
        ("'%(' * 50000 % {}", "code_error", "ValueError: incomplete format key"),
        ("x = 7 ** 200000\nfor _ in range(31):\n    y = x // 3 + x % 7", "memory_limit", "bits"),
        ("x = int('f' * 100000, 16)", "memory_limit", "int() of that text would have 400000 bits"),
    ],
)
def test_the_observed_examples_end_with_a_typed_error(
    home: Home, code: str, error_code: str, message: str
) -> None:
    result = unchanged(home, code)
    assert result.error_code == error_code, result.error
    assert message in (result.error or "")


# --- totals, not fields --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("('{0}' * 25000).format('x' * 99999)", "The formatted text would have 199998"),
        ("'{a}{a}'.format(a='x' * 60000)", "The formatted text would have 120000"),
        ("'%(a)s' * 16000 % {'a': 'x' * 99999}", "The formatted text would have 199998"),
        ("b'%(a)s%(a)s' % {b'a': b'x' * 60000}", "The formatted text would have 120000"),
        ("'%.60000f%.60000f' % (1.0, 1.0)", "The formatted text would have 120004"),
        ("s = 'x' * 60000\nt = f'{s}{s!r}'", "The f-string would have 120002 characters"),
        ("t = f'{1:99999}{2:99999}'", "The f-string would have 199998 characters"),
        ("('\ufb03' * 40000).upper()", "upper() would have 120000 characters"),
        ("('\\U0010ffff' * 30000).encode('utf-32')", "encode() would have 120004"),
        ("(b'\\xff' * 40000).hex(':')", "hex() would have 119999 characters"),
        ("str(b'x' * 99999)", "str() would have 100002 characters"),
        ("str({i: 'x' * 99 for i in range(2000)}.values())", "The text of this value"),
        ("print(['\\x00' * 40000])", "str() would have 160004 characters"),
    ],
)
def test_what_an_operation_builds_is_checked_in_total(home: Home, code: str, message: str) -> None:
    result = unchanged(home, code)
    assert result.error_code == "memory_limit", result.error
    assert message in (result.error or "")


@pytest.mark.parametrize(
    "code",
    [
        "x = ('%s' * 2000) % tuple(['x' * 50] * 2000)",
        "x = ('{}' * 2000).format(*['x' * 50] * 2000)",
        "s = 'x' * 40\nx = f'" + "{s}" * 2000 + "'",
        "x = '%-5s|%+.2f|%#x|%r|%c|%%|' % ('a', 1, 255, 'r', 65)",
        "x = b'%s-%d' % (b'a', 2) + b'%(k)b' % {b'k': b'v'}",
        "x = '{text}{self}'.format(text=1, self=2)\nd = {}\nd.update(value=1)",  # any keywords
    ],
)
def test_formats_up_to_the_limit_are_fine(home: Home, code: str) -> None:
    assert run(code + "\nprint(len(x))", home).ok


def test_format_fields_are_counted_as_steps(home: Home) -> None:
    # One step per field: a format of 20,000 fields stops on a 10,000-step budget.
    for code in ("('%s' * 20000) % ((1,) * 20000)", "('{}' * 20000).format(*[1] * 20000)"):
        assert unchanged(home, code, SandboxLimits(steps=10_000)).error_code == "step_limit"


# --- slow builtins -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        f"({CJK}).encode('idna')",
        "b'abc'.decode('punycode')",
        "str(b'abc', 'idna')",
        "'x'.encode('utf-8', 'namereplace')",
        "'x'.encode('unicode_escape')",
        "'x'.encode(1)",
    ],
)
def test_only_fast_codecs_are_allowed(home: Home, code: str) -> None:
    result = unchanged(home, code)
    assert result.error_code == "code_error"
    assert "The sandbox" in (result.error or "")


def test_fast_codecs_work(home: Home) -> None:
    code = (
        "print('é'.encode(), 'é'.encode('utf-16-le'), b'\\xe9'.decode('latin-1'),"
        " b'a\\xff'.decode('ascii', 'replace'), str(b'ok', 'utf-8'), 'x'.encode('UTF_8'))"
    )
    assert run(code, home).output == "b'\\xc3\\xa9' b'\\xe9\\x00' é a\ufffd ok b'x'\n"


def test_percent_parsing_is_linear() -> None:
    # A regex read '%(' * n in n**2 steps: 2.4 s for n = 50,000, and 16 times that here.
    code = "'%(' * 200000 % {}"
    setup = f"""
        from twin.home import Home
        from twin.pyexec import SandboxLimits, run
        limits = SandboxLimits(size=10**6)
        code = {code!r}
    """
    outcome = run_bounded("run(code, Home(), limits).error", setup=setup)
    assert outcome.result == repr("ValueError: incomplete format key (line 1)")
    assert outcome.cpu_s < 2


# --- big-int work and sorting are charged before they are done ------------------------------------


@pytest.mark.parametrize(
    ("operation", "work"),
    [
        ("y * y", 1665 * 1665),  # digits: 3,329 for x, 1,665 for y
        ("x // y", (3329 - 1665 + 1) * 1665),
        ("x % y", (3329 - 1665 + 1) * 1665),
        ("y ** 2", 3329**2 // 3),
        ("int('9' * 4300)", 477**2),
        ("str(10 ** 4000)", 443**2),
        ("f'{10 ** 4000}'", 443**2),
        ("'%d' % 10 ** 4000", 443**2),
        ("sorted(range(99999))", 99999 * 17),
        ("set().union(*[range(99999)] * 20)", 99999 * 20),
    ],
)
def test_work_is_counted_as_steps(home: Home, operation: str, work: int) -> None:
    before = run(BIG_INTS, home)
    after = run(BIG_INTS + f"z = {operation}", home)
    assert before.ok
    assert after.ok, after.error
    assert after.steps - before.steps >= work // WORK_PER_STEP


def test_work_is_refused_before_it_is_done(home: Home) -> None:
    # The two powers cost about 4,600 steps; the division would cost 2,772 more.
    code = BIG_INTS + "print('before')\nz = x // y\nprint('after')"
    result = unchanged(home, code, SandboxLimits(steps=6000))
    assert result.error_code == "step_limit"
    assert result.output == "before\n"
    result = unchanged(home, "set().union(*[range(100000)] * 100000)")  # 10**10 items
    assert result.error_code == "step_limit"


def test_time_is_checked_before_each_big_operation() -> None:
    # Divisions of 13,200 by 6,600 digits, 0.1 s each: checked every 32 steps, 32 of them would
    # run before the first check; charged, each is checked before it runs.
    code = "x = 3 ** 250000\ny = 3 ** 125000\nwhile True:\n    z = x // y"
    setup = f"""
        from twin.home import Home
        from twin.pyexec import SandboxLimits, run
        limits = SandboxLimits(size=400_000, steps=10**12, seconds=0.3)
        code = {code!r}
    """
    outcome = run_bounded("run(code, Home(), limits).error_code", setup=setup)
    assert outcome.result == repr("time_limit")
    assert outcome.cpu_s < 2


# --- builtins that build an item per item in C count each item -----------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "R = [range(99999)] * 32\nx = list(zip(" + ", ".join(["zip(*R)"] * 32) + "))",
        "x = list(" + "enumerate(" * 150 + "range(99999)" + ")" * 151,
        "x = list(" + "filter(None, " * 150 + "range(1, 99999)" + ")" * 151,
    ],
)
def test_nested_iterators_count_their_items(home: Home, code: str) -> None:
    # Time enough that only the steps can stop it, on a machine however busy.
    limits = replace(DEFAULT_LIMITS, seconds=120.0)
    assert unchanged(home, code, limits).error_code == "step_limit"


def test_print_stops_converting_when_its_output_is_full(home: Home) -> None:
    # Converting all 100,000 lists would take seconds: print(*many) is one step.
    started = time.process_time()
    result = run("print(*[list(range(1000))] * 100000)", home)
    assert time.process_time() - started < 1
    assert result.ok
    assert result.output.endswith("[output truncated]")


# --- no snippet exhausts the machine -------------------------------------------------------------


HOSTILE = (
    "t = '{:99999}' * 6000\nt.format(*[0] * 6000)",
    "('%99999d' * 6000) % tuple(range(6000))",
    "'%(a(b)c)600000000s' % {'a(b)c': 1}",
    f"({CJK}).encode('punycode')",
    "'%(' * 50000 % {}",
    "('{0}' * 25000).format('x' * 99999)",
    "'%(a)s' * 16000 % {'a': 'x' * 99999}",
    "s = 'x' * 99999\nt = f'" + "{s}" * 2000 + "'",
    BIG_INTS + "while True:\n    z = x // y + x % y",
    "x = 1\nwhile True:\n    x = x * 3",
    "str(10 ** 100000)",
    "int('9' * 100000)",
    "sorted(range(10**8))",
    "R = [range(99999)] * 32\nx = list(zip(" + ", ".join(["zip(*R)"] * 32) + "))",
    "x = list(" + "enumerate(" * 150 + "range(99999)" + ")" * 151,
    "set().union(*[range(100000)] * 100000)",
    "print(*[list(range(1000))] * 100000)",
    "s = b'\\xff' * 30000\nfor _ in range(10):\n    s = s.hex().encode('utf-32')",
    "x = []\nfor i in range(100000):\n    x.append('x' * 99999 + str(i))",
    "x = [0] * 99999\ny = [" + "*x, " * 3000 + "]",
    "x = {i: 'x' * 99999 for i in range(1000)}\nprint(x.values())",
    "{}[10**5000]",
    f"call_service('switch', 'turn_on', entity_id='{KETTLE}', x=10**5000)",
)
BOUNDED_SETUP = f"""
    import time
    from twin.home import Home
    from twin.pyexec import run
    from twin.registry import EntityEntry
    home = Home("Bounded")
    home.add_entity(EntityEntry({KETTLE!r}, "Kettle"), "off")
"""
# The memory limit plus a margin for what is built between two checks.
BOUNDED_MB = (DEFAULT_LIMITS.memory or 0) // 2**20 + 256
CPU_BOUND = 3 * DEFAULT_LIMITS.seconds + 1


@pytest.mark.parametrize("code", HOSTILE, ids=[f"hostile{n}" for n in range(len(HOSTILE))])
def test_hostile_snippets_stay_within_memory_and_time(code: str) -> None:
    outcome = run_bounded(
        f"(lambda r: (r.error_code, (r.error or '').split(':')[0]))(run({code!r}, home))",
        setup=BOUNDED_SETUP,
        memory_mb=BOUNDED_MB,
    )
    assert outcome.error is None  # nothing escaped run, and no MemoryError outside it
    assert outcome.result is not None
    error_code, error = eval(outcome.result)
    assert error != "MemoryError"  # the sandbox's checks stopped it, not the address space
    assert error_code is None or error_code in TYPED
    assert outcome.cpu_s < CPU_BOUND


# --- properties ----------------------------------------------------------------------------------


SIZES = st.sampled_from([0, 1, 7, 100, 4300, 30_000, 99_999, 100_001, 10**6, 10**9])
NUMBERS = st.one_of(
    st.integers(-5, 5).map(str),
    SIZES.map(str),
    st.tuples(st.sampled_from([2, 3, 10]), SIZES).map(lambda p: f"{p[0]} ** {p[1]}"),
)
TEXTS = st.one_of(
    st.sampled_from(["'x'", "'%s'", "'{}'", "'\\t'", "'\ufb03'", "'%(a)s'", "b'\\xff'"]),
    st.tuples(st.sampled_from(["'ab'", "'%d'", "'{:>9}'", "'%99999s'"]), SIZES).map(
        lambda p: f"{p[0]} * {p[1]}"
    ),
)


def _compose(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    unary = st.sampled_from(
        [
            "str({})",
            "int({})",
            "len({})",
            "({}).upper()",
            "({}).encode('utf-32')",
            "({}).zfill(99999)",
            "({}).center(1000)",
            "({}).expandtabs(9999)",
            "({}).replace('', 'yy')",
            "' '.join([{}] * 999)",
            "'{{:>9}}{{}}'.format(1, {})",
            "f'{{{}!r:>99}}'",
            "'%s %r' % ({}, 1)",
            "'%(a)s' % {{'a': {}}}",
            "sorted(str({}))",
            "[{}] * 9999",
            "list(range({}))",
            "-({})",
        ]
    )
    binary = st.sampled_from(["+", "*", "//", "%", "**", "<<", "-"])
    return st.one_of(
        st.tuples(unary, children).map(lambda p: p[0].format(p[1])),
        st.tuples(children, binary, children).map(lambda p: f"({p[0]}) {p[1]} ({p[2]})"),
    )


EXPRESSIONS = st.recursive(st.one_of(NUMBERS, TEXTS), _compose, max_leaves=6)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(first=EXPRESSIONS, second=EXPRESSIONS)
def test_any_composition_is_ok_or_a_typed_error(first: str, second: str) -> None:
    home = kettle_home()
    states = dict(home.states)
    code = f"x = {first}\n{TURN_ON_KETTLE}y = {second}\nprint(len(str(x)) + len(str(y)))"
    result = run(code, home, SandboxLimits(steps=20_000, seconds=2.0, size=50_000))
    if result.ok:
        assert home.state(KETTLE).state == "on"
    else:
        assert result.error_code in TYPED, result.error
        assert home.states == states


FORMAT_PARTS = st.sampled_from(
    [*"%%%()as drxXc5 0-.l#+qiufeg\x00", "%(a)", "%(a(b))", "%%", "%5.2", "%-3"]
)
FORMAT_VALUES = st.one_of(
    st.integers(-300, 300),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=3),
    st.tuples(),
    st.lists(st.one_of(st.integers(-9, 9), st.text(max_size=2)), max_size=4).map(tuple),
    st.dictionaries(st.sampled_from(["a", "a(b)", "b"]), st.integers(-9, 9), max_size=2),
    st.lists(st.integers(), max_size=2),
)


def same_as_python(expression: str) -> None:
    """The sandbox evaluates `expression` as Python does, or fails with Python's error (or
    refuses a format field that looks up attributes or nests, which Python would allow)."""
    result = run(f"print([{expression}])", kettle_home())  # a list prints its item's repr
    if "use an f-string" in (result.error or ""):
        return
    try:
        expected, failed = repr([eval(expression)]) + "\n", False
    except Exception as err:
        expected, failed = f"{type(err).__name__}: {err}", True
    if failed:
        assert (result.error or "").startswith(expected), result.error
    else:
        assert result.output == expected, result.error


@settings(max_examples=300, deadline=None)
@given(
    template=st.lists(FORMAT_PARTS, max_size=10).map("".join),
    values=FORMAT_VALUES,
    as_bytes=st.booleans(),
)
def test_percent_formatting_is_pythons(template: str, values: object, as_bytes: bool) -> None:
    same_as_python(f"{template.encode() if as_bytes else template!r} % {values!r}")


@settings(max_examples=300, deadline=None)
@given(
    template=st.lists(
        st.sampled_from([*"{}0a:>5!rs,x ", "{}", "{0}", "{a}", "{:>3}", "{!r}", "{{", "}}"]),
        max_size=8,
    ).map("".join),
    args=st.lists(st.one_of(st.integers(-3000, 3000), st.text(max_size=2)), max_size=3),
)
def test_str_format_is_pythons(template: str, args: list[object]) -> None:
    same_as_python(f"{template!r}.format(*{args!r}, a=1.5)")


PROGRAM_TEXT = st.lists(
    st.sampled_from(
        [
            "x",
            " = ",
            "'%(",
            "%s",
            "{}",
            "'",
            '"',
            "f'{",
            "}",
            "(",
            ")",
            "[",
            "]",
            " * ",
            " ** ",
            " // ",
            "10",
            "99999",
            ".format(",
            ".encode('punycode')",
            "\n",
            "    ",
            "for i in range(9):",
            "call_service('switch', 'turn_on', entity_id='switch.kettle')",
            "print(",
            "state(",
            "import os",
            "__class__",
            "\x00",
            "\ud800",
            "lambda: ",
        ]
    ),
    max_size=12,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(code=st.one_of(st.text(max_size=60), PROGRAM_TEXT))
def test_the_pyexec_tool_never_raises(code: str) -> None:
    home = kettle_home()
    states = dict(home.states)
    result = pyexec(home, code)
    json.dumps(result)
    assert isinstance(result["success"], bool)
    if not result["success"]:
        assert result["error"]["code"] in TYPED
        assert home.states == states


@pytest.mark.parametrize(
    "code",
    [
        "{}[10**5000]",
        "assert False, [10**5000]",
        f"call_service('switch', 'turn_on', {{(10**5000,): 1}}, entity_id='{KETTLE}')",
        f"call_service('switch', 'turn_on', entity_id='{KETTLE}', x={{10**5000: 1}}.keys())",
    ],
)
def test_the_pyexec_tool_reports_values_python_cannot_write(home: Home, code: str) -> None:
    # Python writes ints of at most 4300 digits: the error message and the call's data would fail.
    result = pyexec(home, code)
    json.dumps(result)
    assert result["success"] is False
    assert result["error"]["code"] == "code_error"


# --- C loops over items are charged their weight -------------------------------------------------


ROWS = "row = [0] * 10**5\nrows = [row] * 10**5\n"  # 10**10 items, one step to build
DAG = "t = (0,)\nfor _ in range(40):\n    t = (t, t)\n"  # 2**41 items, 40 steps to build
BIG = "n = 3 ** 63000\n"  # 3,329 digits
C_LOOPS = (
    ROWS + "sorted(rows)",
    ROWS + "rows.sort(reverse=True)",
    ROWS + "sorted(rows, key=lambda r: r)",
    ROWS + "[0] in rows",
    ROWS + "row in [list(row)] * 10**5",
    ROWS + "rows.count(list(row))",
    ROWS + "rows.index([1])",
    ROWS + "rows.remove([1])",
    ROWS + "min(rows)",
    ROWS + "max(rows, key=lambda r: r)",
    ROWS + "rows == [list(row)] * 10**5",
    ROWS + "rows <= [list(row)] * 10**5",
    ROWS + "0 < 1 < len(rows) and [] < rows == [list(row)] * 10**5",
    BIG + "sum([n, n] * 50000)",
    DAG + "{t}",
    DAG + "{t: 1}",
    DAG + "t in {1}",
    DAG + "set([t])",
    DAG + "set(x for x in [t])",
    DAG + "dict([(t, 1)])",
    DAG + "dict.fromkeys([t])",
    DAG + "{t for _ in range(1)}",
    DAG + "{t: 1 for _ in range(1)}",
    DAG + "d = {}\nd[t] = 1",
    DAG + "{}.get(t)",
    DAG + "s = set()\ns.add(t)",
    DAG + "set().union([t])",
    DAG + "t == (t[0], t[1])",
)
TEXTS_OF_DAGS = (DAG + "str(t)", DAG + "print(t)", DAG + "f'{t}'", DAG + "'%s' % (t,)")


@pytest.mark.parametrize(
    ("code", "error_code"),
    [(code, "step_limit") for code in C_LOOPS] + [(code, "memory_limit") for code in TEXTS_OF_DAGS],
)
def test_c_loops_over_big_items_are_refused_before_they_run(code: str, error_code: str) -> None:
    # Each would run from 2 s (sum) to hours in one C call; weighing a DAG takes linear time.
    outcome = run_bounded(
        "(lambda before, r: (r.error_code, bool(r.calls), home.states == before))"
        f"(dict(home.states), run({TURN_ON_KETTLE + code!r}, home))",
        setup=BOUNDED_SETUP,
        memory_mb=BOUNDED_MB,
    )
    assert outcome.error is None
    assert outcome.result == repr((error_code, True, True))
    assert outcome.cpu_s < 10


def test_the_charge_is_the_weight_of_what_the_loop_visits(home: Home) -> None:
    # 1,000 rows of 1,000 zeros: a million items to compare, about 1,000 steps; shared or not.
    for rows in ("[list(row) for _ in range(1000)]", "[row] * 1000"):
        code = f"row = [0] * 1000\nrows = {rows}\n"
        before = run(code, home)
        after = run(code + "x = rows == [list(row)] * 1000", home)
        assert after.ok, after.error
        assert 1000 <= after.steps - before.steps < 1100


NESTED_INTS = st.recursive(
    st.integers(-3, 3), lambda items: st.lists(items, max_size=3), max_leaves=12
)
NESTED_KEYS = st.recursive(
    st.one_of(st.integers(-3, 3), st.text("ab", max_size=2)),
    lambda items: st.lists(items, max_size=3).map(tuple),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(a=NESTED_INTS, b=NESTED_INTS)
def test_small_containers_compare_and_sort_as_in_python(a: object, b: object) -> None:
    for expression in (
        f"{a!r} == {b!r}",
        f"{a!r} < {b!r} <= {b!r} != {a!r}",
        f"{a!r} in [{b!r}, 1]",
        f"[{a!r}, {b!r}].count({b!r})",
        f"sorted([{b!r}, {a!r}, {b!r}])",
        f"sorted([{b!r}, {a!r}], key=lambda x: x, reverse=True)",
        f"min({a!r}, {b!r})",
        f"max([{a!r}, {b!r}], key=str)",
    ):
        same_as_python(expression)


@settings(max_examples=150, deadline=None)
@given(a=NESTED_KEYS, b=NESTED_KEYS)
def test_small_tuples_hash_as_in_python(a: object, b: object) -> None:
    for expression in (
        f"{{{a!r}: 1, {b!r}: 2}}",
        f"{{{a!r}, {b!r}}} == set([{b!r}, {a!r}])",
        f"{a!r} in {{{b!r}}}",
        f"dict([({a!r}, 1)]).get({b!r})",
        f"{{{a!r}: 3}}[{a!r}]",
    ):
        same_as_python(expression)


def test_comparison_chains_evaluate_each_operand_once_and_only_when_needed(home: Home) -> None:
    code = (
        "def f(v):\n    print(v)\n    return v\n"
        "n = 3\nprint(0 < n <= 3 != 2, 1 < f(2) < 3, 3 < 1 < f(9), 0 < f(1 < f(2) < n) <= 1 == 1)"
    )
    result = run(code, home)
    assert result.ok, result.error
    assert result.output == "2\n2\nTrue\nTrue True False True\n"
