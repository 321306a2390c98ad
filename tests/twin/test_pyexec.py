"""The pyexec sandbox: its API, escape attempts, budgets, size guards and all-or-nothing runs."""

from __future__ import annotations

import ast
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twin.auditor import CONFIRMING_POLICY, DEFAULT_POLICY, ActionPolicy
from twin.catalog import load_catalog
from twin.home import Home
from twin.pyexec import (
    DEFAULT_LIMITS,
    ExecResult,
    SandboxLimitError,
    SandboxLimits,
    ServiceCall,
    run,
)
from twin.registry import Area, EntityEntry, Floor


@pytest.fixture
def home() -> Home:
    """A kitchen with a kettle plug (switch + power sensor), a hall with a wall switch, an enum
    sensor with a list attribute and a lock."""
    home = Home("Sandbox home")
    home.add_floor(Floor("ground", "Ground floor"))
    home.add_area(Area("kitchen", "Kitchen", "ground"))
    home.add_area(Area("hall", "Hall", "ground"))
    catalog = load_catalog()
    catalog["smart_plug"].install(home, "kettle", "Kettle", "kitchen")
    catalog["wall_switch"].install(home, "hall_light", "Hall light", "hall")
    home.add_entity(
        EntityEntry("sensor.mode", "Mode", device_class="enum"), "eco", {"options": ["eco", "max"]}
    )
    home.add_entity(EntityEntry("lock.front_door", "Front door"), "locked")
    return home


TURN_ON_KETTLE = 'call_service("switch", "turn_on", entity_id="switch.kettle")\n'


def ok(result: ExecResult) -> ExecResult:
    assert result.ok, result.error
    return result


def unchanged(
    home: Home,
    code: str,
    limits: SandboxLimits = DEFAULT_LIMITS,
    auditor: ActionPolicy | None = None,
) -> ExecResult:
    """Run code that must fail, and check that it left the home exactly as it was."""
    states, now = dict(home.states), home.now
    result = run(code, home, limits, auditor)
    assert not result.ok
    assert home.states == states
    assert home.now == now
    return result


# --- the API -------------------------------------------------------------------------------------


def test_call_service_forms(home: Home) -> None:
    result = ok(
        run(
            TURN_ON_KETTLE + 'call_service("switch", "turn_on", {}, {"area_id": "hall"})\n'
            'call_service("homeassistant", "toggle", target={"entity_id": "switch.kettle"})\n'
            'print(state("switch.kettle"), state("switch.hall_light"))',
            home,
        )
    )
    assert result.output == "off on\n"
    assert home.state("switch.hall_light").state == "on"
    assert result.calls == (
        ServiceCall("switch", "turn_on", {}, {"entity_id": "switch.kettle"}),
        ServiceCall("switch", "turn_on", {}, {"area_id": "hall"}),
        ServiceCall("homeassistant", "toggle", {}, {"entity_id": "switch.kettle"}),
    )


def test_keyword_fields_split_into_data_and_target(home: Home) -> None:
    result = unchanged(
        home, 'call_service("switch", "turn_on", {"speed": 1}, area_id="kitchen", force=True)'
    )
    assert result.calls == (
        ServiceCall("switch", "turn_on", {"speed": 1, "force": True}, {"area_id": "kitchen"}),
    )
    assert result.error_code == "invalid_data"


@pytest.mark.parametrize(
    ("code", "error_code", "message"),
    [
        (
            'call_service("switch", "turn_on", {"entity_id": "switch.kettle"}, entity_id="x")',
            "invalid_data",
            "given twice",
        ),
        (
            'call_service("switch", "turn_on", ["switch.kettle"])',
            "invalid_data",
            "data must be a dict",
        ),
        ('call_service("switch.turn_on", entity_id="switch.kettle")', "code_error", "TypeError"),
        (
            'call_service(1, "turn_on", entity_id="switch.kettle")',
            "service_not_found",
            "as strings",
        ),
        ('call_service("switch", "fly", entity_id="switch.kettle")', "service_not_found", "offers"),
        (
            'call_service("switch", "turn_on", entity_id="switch.nope")',
            "entity_not_found",
            "switch.nope",
        ),
        ('state("switch.nope")', "entity_not_found", "switch.nope"),
        ('list_entities(area="attic")', "target_not_found", "No area with id 'attic'"),
        ("list_entities(area=(1,))", "target_not_found", "No area with id tuple"),
        ("state(['x'] * 9)", "entity_not_found", "Entity ids are strings, got list"),
        ("attr(('x' * 50000,) * 50000, 'a')", "entity_not_found", "strings, got tuple"),
        ("entity(1)", "entity_not_found", "Entity ids are strings, got int"),
        (
            "call_service('switch', 'turn_on', entity_id='switch.kettle', x=['x' * 50000] * 9)",
            "memory_limit",
            "The text of this value would have over 100000 characters",
        ),
    ],
)
def test_api_errors(home: Home, code: str, error_code: str, message: str) -> None:
    result = unchanged(home, TURN_ON_KETTLE + code)
    assert result.error_code == error_code
    assert message in (result.error or "")
    assert (result.error or "").endswith("(line 2)")


def test_reading_the_home(home: Home) -> None:
    result = ok(
        run(
            'print(list_entities("switch"))\n'
            'print(list_entities(area="kitchen"))\n'
            'print(attr("sensor.kettle_power", "unit_of_measurement"), attr("sensor.mode", "x"))\n'
            'plug = entity("switch.kettle")\n'
            "print(plug.entity_id, plug.domain, plug.state, plug.device_class, plug)\n"
            'print(entity("sensor.mode").attributes["options"])',
            home,
        )
    )
    assert result.output.splitlines() == [
        "['switch.hall_light', 'switch.kettle']",
        "['sensor.kettle_power', 'switch.kettle']",
        "W None",
        "switch.kettle switch off outlet <entity switch.kettle: off>",
        "['eco', 'max']",
    ]
    assert len(ok(run("print(len(list_entities()))", home)).output) == 2


def test_values_read_are_copies(home: Home) -> None:
    before = home.state("sensor.mode")
    ok(run('options = attr("sensor.mode", "options")\noptions.append("boost")', home))
    ok(run('entity("sensor.mode").options.clear()', home))
    result = run('entity("sensor.mode").attributes["options"] = []', home)
    assert result.error_code == "code_error"
    assert "does not support item assignment" in (result.error or "")
    assert home.state("sensor.mode") is before
    assert before.attributes["options"] == ["eco", "max"]


def test_entity_views_are_read_only_and_explain_missing_attributes(home: Home) -> None:
    result = run('entity("switch.kettle").state = "on"', home)
    assert result.restricted == ("attribute assignment",)
    result = run('entity("switch.kettle").brightness', home)
    assert result.error_code == "code_error"
    assert "switch.kettle has no attribute 'brightness'; it has: device_class" in (
        result.error or ""
    )


def test_print_output(home: Home) -> None:
    result = ok(run('print("a", 1, [2], sep="-", end="!")\nprint()\nprint(None, end=None)', home))
    assert result.output == "a-1-[2]!\nNone\n"
    result = ok(run('for i in range(100):\n    print("x" * 50)', home, SandboxLimits(output=120)))
    assert result.output == "\n".join(["x" * 50] * 2 + ["x" * 18]) + "\n[output truncated]"
    assert run('print("a", sep=1)', home).error_code == "code_error"


def test_python_that_agents_write(home: Home) -> None:
    code = """
def is_on(entity_id):
    return state(entity_id) == "on"

plugs = [e for e in list_entities("switch") if not is_on(e)]
for plug in sorted(plugs, key=lambda e: e.split(".")[1]):
    call_service("switch", "turn_on", entity_id=plug)
power = {e: float(state(e)) for e in list_entities("sensor") if e.endswith("_power")}
total = 0
for _, watts in power.items():
    total += watts
names = ", ".join(e.split(".")[1] for e in plugs)
assert all(map(is_on, plugs)), "a plug stayed off"
print(f"on: {names}; power {total:.1f} W; {len(plugs)!r} plugs; {'%s/%d' % ('a', 2)}")
print("{} {:>4}".format("pct", 12), "x".ljust(3), "a-b".replace("-", "+"), -(2**10) << 2)
"""
    result = ok(run(code, home))
    assert result.output == (
        "on: hall_light, kettle; power 0.0 W; 2 plugs; a/2\npct   12 x   a+b -4096\n"
    )
    assert {s.entity_id for s in home.states.values() if s.state == "on"} == {
        "switch.kettle",
        "switch.hall_light",
    }


def test_errors_name_type_message_and_line(home: Home) -> None:
    result = run("x = 1\n\ny = {}\nprint(y['missing'])", home)
    assert result.error == "KeyError: 'missing' (line 4)"
    assert result.error_code == "code_error"
    result = run("def f(x):\n    return 1 / x\n\nf(0)", home)
    assert result.error == "ZeroDivisionError: division by zero (line 2)"
    result = run("assert state('switch.kettle') == 'on', 'kettle is off'", home)
    assert result.error == "AssertionError: kettle is off (line 1)"
    # Messages that would quote something huge are not built.
    result = run("x = ('x' * 50000,) * 50000\n{}[x]", home)
    assert result.error == "KeyError: (a message too long to show) (line 2)"
    result = run("assert False, ['x' * 50000] * 50000", home)
    assert result.error == "AssertionError: (a message too long to show) (line 1)"


def test_syntax_errors_and_oversized_code(home: Home) -> None:
    result = run("print('a')\nfor x in\n", home)
    assert result.error_code == "syntax_error"
    assert result.error == "SyntaxError: invalid syntax (line 2)"
    assert result.output == ""
    assert run("return 1", home).error == "SyntaxError: 'return' outside function (line 1)"
    result = run("x = 1\n" * 10, home, SandboxLimits(code=50))
    assert result.error == "The code has 60 characters; the sandbox runs at most 50"


# --- validation: escape attempts are refused before anything runs ------------------------------


@pytest.mark.parametrize(
    ("code", "label"),
    [
        ("().__class__.__bases__[0].__subclasses__()", "__subclasses__"),
        ("import os", "import"),
        ("from os import system", "import"),
        ("__import__('os').system('true')", "__import__"),
        ("open('/etc/passwd').read()", "open"),
        ("getattr(1, '__class__')", "getattr"),
        ("setattr(print, 'x', 1)", "setattr"),
        ("delattr(print, 'x')", "delattr"),
        ("hasattr(1, 'real')", "hasattr"),
        ("eval('1 + 1')", "eval"),
        ("exec('x = 1')", "exec"),
        ("compile('1', 'f', 'eval')", "compile"),
        ("globals()['x'] = 1", "globals"),
        ("locals()", "locals"),
        ("vars()", "vars"),
        ("type(1)", "type"),
        ("isinstance(1, int)", "isinstance"),
        ("issubclass(bool, int)", "issubclass"),
        ("breakpoint()", "breakpoint"),
        ("input()", "input"),
        ("help()", "help"),
        ("memoryview(b'x')", "memoryview"),
        ("classmethod(print)", "classmethod"),
        ("staticmethod(print)", "staticmethod"),
        ("super()", "super"),
        ("object()", "object"),
        ("class A:\n    pass", "class"),
        ("try:\n    x = 1\nexcept Exception:\n    pass", "try"),
        ("try:\n    x = 1\nexcept* ValueError:\n    pass", "try"),
        ("try:\n    x = 1\nfinally:\n    pass", "try"),
        ("with open('x') as f:\n    pass", "with"),
        ("global x", "global"),
        ("def f():\n    x = 1\n    def g():\n        nonlocal x", "nonlocal"),
        ("async def f():\n    pass", "async"),
        ("def f():\n    yield 1", "yield"),
        ("def f():\n    yield from [1]", "yield"),
        ("match 1:\n    case int(real=r):\n        pass", "match"),
        ("(lambda: 0).__globals__", "__globals__"),
        ("print.__self__", "__self__"),
        ("g = (i for i in [1])\ng.gi_frame.f_back.f_globals", "gi_frame"),
        ("x = 1\nx.f_globals", "f_globals"),
        ("x = 1\nx.tb_frame", "tb_frame"),
        ("x = 1\nx.co_code", "co_code"),
        ("x = 1\nx.cr_frame", "cr_frame"),
        ("'{a}'.format_map({'a': 1})", "format_map"),
        ("(1).to_bytes(10**9, 'big')", "to_bytes"),
        ("'x'.translate({120: 'y' * 1000})", "translate"),
        ("int.mro()", "mro"),
        ("__builtins__", "__builtins__"),
        ("_secret = 1", "_secret"),
        ("def _hook():\n    pass", "_hook"),
        ("def f(_x):\n    pass", "_x"),
        ("dict(__class__=1)", "__class__"),
        ("x = [1, 2]\nx[:] = x * 2", "slice assignment"),
        ("x = [1]\nx[0:1] += x", "slice assignment"),
        ("print.x = 1", "attribute assignment"),
        ("del print.x", "attribute assignment"),
        ("x.\uff3f\uff3fclass\uff3f\uff3f", None),  # fullwidth underscores are not identifiers
        ("\uff47etattr(1, 'real')", "getattr"),  # NFKC-normalised to getattr
    ],
)
def test_escape_attempts_are_refused_without_running(
    home: Home, code: str, label: str | None
) -> None:
    result = unchanged(home, TURN_ON_KETTLE + code)
    if label is None:
        assert result.error_code == "syntax_error"
        return
    assert result.error_code == "restricted_code"
    assert label in result.restricted
    assert f"{label} (line " in (result.error or "")
    assert result.calls == ()


@pytest.mark.parametrize(
    ("code", "node"), [("type Alias = int", "TypeAlias"), ("x = t'{1}'", "TemplateStr")]
)
def test_syntax_of_newer_pythons_is_refused(home: Home, code: str, node: str) -> None:
    result = unchanged(home, TURN_ON_KETTLE + code)
    assert result.error_code == ("restricted_code" if hasattr(ast, node) else "syntax_error")


def test_refusal_lists_every_construct_in_line_order(home: Home) -> None:
    result = run("import os\nx = 1\ny = x.__class__\ntry:\n    eval('2')\nfinally:\n    pass", home)
    assert result.restricted == ("import", "__class__", "try", "eval")
    assert result.error == (
        "Restricted code, not run: import (line 1), __class__ (line 3), try (line 4), "
        "eval (line 5). The sandbox allows no import, class, try, with, global, nonlocal, "
        "async, yield or match; no names or attributes starting with '_'; no attribute or "
        "slice assignment; no getattr, eval, exec, open, type, isinstance or the like"
    )


def test_allowed_constructs(home: Home) -> None:
    code = """
_ = 1
for _ in range(2):
    pass
f = lambda x, y=2: x * y
def g(*args, **kwargs):
    return len(args) + len(kwargs)
if (n := g(1, 2, a=3)) > 2:
    del n
a, *rest = [1, 2, 3]
d = {**{"k": 1}, "j": 2}
x = [1, 2, 3]
del x[0:1]
x[0] = 5
x[1] -= 1
print(f(3), rest, d, x, [*x, *rest], "ok" if True else "no")
"""
    assert ok(run(code, home)).output == "6 [2, 3] {'k': 1, 'j': 2} [5, 2] [5, 2, 2, 3] ok\n"


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ("str.join('', ['a'])", "object has no attribute 'join'"),
        ("list.extend([], [1])", "Call extend on a value"),
        ("print(sum([[1], [2]], []))", "sum adds numbers only"),
        ("print(round(1, -10**8))", "round's ndigits must be between -1000 and 1000"),
        ("'{0.real}'.format(1)", "format fields cannot look up attributes"),
        ("'{0[0]}'.format([1])", "format fields cannot look up attributes"),
        ("'{:{}}'.format(1, 10**9)", "nested format fields are not allowed"),
        ("'%*d' % (10**9, 1)", "'*' widths are not allowed"),
        ("x = SystemExit", "name 'SystemExit' is not defined"),
        ("raise ValueError('x')", "name 'ValueError' is not defined"),
        ("import_ = dir()", "name 'dir' is not defined"),
    ],
)
def test_unsafe_paths_fail_at_run_time(home: Home, code: str, error: str) -> None:
    result = run(code, home)
    assert result.error_code == "code_error"
    assert error in (result.error or "")


# --- budgets: steps, time, memory ----------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "while True:\n    pass",
        "x = 0\nwhile True:\n    x = x + 1",
        "for i in range(100000):\n    for j in range(100000):\n        pass",
        "print(sum(1 for a in range(100000) for b in range(100000)))",
        "print(len([0 for a in range(100000) for b in range(100000)]))",
        "print(sorted(range(1000), key=lambda x: [len(range(1)) for _ in range(100000)]))",
        "def f():\n    while True:\n        pass\nf()",
    ],
)
def test_step_budget_stops_endless_code(home: Home, code: str) -> None:
    limits = SandboxLimits(steps=5000)
    result = unchanged(home, TURN_ON_KETTLE + code, limits=limits)
    assert result.error_code == "step_limit"
    assert (result.error or "").startswith("StepLimitError: The code ran over 5000 steps")
    assert result.steps == 5001


@pytest.mark.parametrize(
    "code",
    [
        "x = max(rows, key=list)",
        "x = min(rows, key=tuple)",
        "x = sorted(rows, key=tuple)",
        "rows.sort(key=tuple)",
        "x = list(filter(tuple, rows))",
        "x = list(map(tuple, rows))",
        "x = list(map(lambda row: row, rows))",
    ],
)
def test_functions_that_builtins_call_count_steps(home: Home, code: str) -> None:
    # Each call copies 99999 items: uncounted, 2000 of them would run on in one C call.
    limits = SandboxLimits(steps=1000, seconds=60)  # the steps stop it, however busy the machine
    result = unchanged(home, TURN_ON_KETTLE + f"rows = [list(range(99999))] * 2000\n{code}", limits)
    assert result.error_code in ("step_limit", "memory_limit")  # the keys that sort keeps add up


def test_zip_and_map_take_a_few_iterables(home: Home) -> None:
    assert ok(run("print(list(zip(*[[1, 2]] * 32))[0] == (1,) * 32)", home)).output == "True\n"
    for code in ("zip(*[range(99999)] * 33)", "map(max, *[range(99999)] * 33)"):
        result = run(code, home)
        assert result.error_code == "code_error"
        assert "takes at most 32 iterables here, got 33" in (result.error or "")


def test_deep_recursion_stops_cleanly(home: Home) -> None:
    result = unchanged(
        home,
        TURN_ON_KETTLE + "def f(n):\n    return f(n + 1)\nf(0)",
    )
    assert result.error_code == "code_error"
    assert (result.error or "").startswith("RecursionError")
    f = "f = lambda n: list(map(f, [n]))\nf(0)"
    assert run(f, home).error_code == "code_error"


def test_time_limit(home: Home) -> None:
    limits = SandboxLimits(steps=10**9, seconds=0.2)
    result = unchanged(
        home,
        TURN_ON_KETTLE + "while True:\n    x = sorted(range(100000), key=lambda n: -n)",
        limits=limits,
    )
    assert result.error_code == "time_limit"
    assert result.error is not None
    assert result.error.startswith("TimeLimitError: The code ran over 0.2 s (line ")


def test_limit_errors_cannot_be_caught() -> None:
    assert not issubclass(SandboxLimitError, Exception)


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ('"a" * 10**10', "Repeating a str would have 10000000000 characters"),
        ("10**10 * 'a'", "Repeating a str would have 10000000000 characters"),
        ("[0] * 10**9", "Repeating a list would have 1000000000 items"),
        ("x = (1, 2)\nx *= 10**9", "Repeating a tuple would have 2000000000 items"),
        ("x = [0]\nx *= 10**9", "Repeating a list would have 1000000000 items"),
        ("list(range(10**12))", "range() would have 1000000000000 numbers"),
        ("range(10**100)", "range() would have"),
        ("10**10**10", "10 ** 10000000000 would have 33219280949 bits"),
        ("x = 3\nx **= 10**8", "3 ** 100000000 would have 158496251 bits"),
        ("1 << 10**10", "1 << 10000000000 would have 10000000001 bits"),
        ("x = 2**50000\ny = x * x * x", "The product would have 100002 bits"),
        ("s = 'x'\nfor i in range(100):\n    s = s + s", "Adding to a str would have 131072"),
        ("s = 'x'\nfor i in range(100):\n    s += s", "Adding to a str would have 131072"),
        ("a = [1]\nfor i in range(100):\n    a += a", "Adding to a list would have 131072 items"),
        ("a = [1]\nfor i in range(100):\n    a.extend(a)", "The extended list would have 131072"),
        ("d = {'a': [1]}\nfor i in range(100):\n    d['a'] += d['a']", "Adding to a list"),
        ("s = ['x' * 50000] * 100000\nprint(s)", "The text of this value would have"),
        ("s = ['x' * 50000] * 100000\nt = str(s)", "The text of this value would have"),
        ("s = ['x' * 50000] * 100000\nt = f'{s}'", "The text of this value would have"),
        ("s = ['x' * 50000] * 100000\nt = f'{s!r}'", "The text of this value would have"),
        ("s = ['x' * 50000] * 100000\nt = '%s' % (s,)", "The text of this value would have"),
        ("s = ['x' * 50000] * 100000\nt = '{}'.format(s)", "The text of this value would have"),
        ("s = ['x' * 50000] * 100000\nt = ''.join(s)", "The joined text would have 5000000000"),
        ("s = ['x' * 50000] * 100000\nt = b''.join([b'x' * 99999] * 2)", "joined text"),
        ("t = ('x' * 1000).replace('', 'y' * 1000)", "The replaced text would have 1002000"),
        ("s = 'x' * 99999\nt = f'{s}{s}'", "The f-string would have 199998 characters"),
        ("x = [[list(range(999))] * 999]\ncall_service('switch', 'turn_on', x=x)", "over 100000"),
        ("f'{1:>1000000000}'", "Padding to that width would have 1000000000"),
        ("f'{1.5:.{10**9}f}'", "Padding to that width would have 1000000000"),
        ("'%1000000000d' % 1", "Padding to that width would have 1000000000"),
        ("b'%1000000000d' % 1", "Padding to that width would have 1000000000"),
        ("'{0:>1000000000}'.format(1)", "Padding to that width would have 1000000000"),
        ("'x'.ljust(10**9)", "Padding to that width would have 1000000000"),
        ("'x'.rjust(10**9)", "Padding to that width"),
        ("'x'.center(10**9)", "Padding to that width"),
        ("'1'.zfill(10**9)", "Padding to that width"),
        ("'\\t'.expandtabs(10**9)", "Padding to that width would have 1000000001"),
        ("'x'.encode().ljust(10**9)", "Padding to that width"),
    ],
)
def test_huge_allocations_are_refused(home: Home, code: str, message: str) -> None:
    result = unchanged(home, TURN_ON_KETTLE + code)
    assert result.error_code == "memory_limit", result.error
    assert message in (result.error or "")
    assert "100000" in (result.error or "")


def test_sizes_up_to_the_limit_are_fine(home: Home) -> None:
    limits = SandboxLimits(size=1000)
    assert ok(run("x = 'ab' * 500\ny = [0] * 1000\nz = list(range(1000))", home, limits))
    for code in ("'ab' * 501", "[0] * 1001", "range(1001)", "'a' * 1000 + 'b'", "f'{1:>1001}'"):
        assert run(code, home, limits).error_code == "memory_limit", code
    result = ok(run("print(str(['x' * 10] * 50))", home, SandboxLimits(size=1000, output=5000)))
    assert len(result.output) == 50 * len("'xxxxxxxxxx', ") + 1
    assert run("print(str(['x' * 10] * 100))", home, limits).error_code == "memory_limit"


def test_memory_growth_over_many_steps_is_stopped(home: Home) -> None:
    # 100 lists of 99999 fresh ints: about 400 MiB if nothing stopped it.
    limits = SandboxLimits(memory=64 * 2**20, seconds=30)
    code = "kept = []\nfor i in range(100):\n    kept.append(list(range(99999)))"
    result = run(code, home, limits)
    assert result.error_code == "memory_limit"
    assert result.error == "MemoryLimitError: The code used over 64 MiB of memory (line 3)"


def test_memory_growth_inside_one_builtin_call_is_stopped(home: Home) -> None:
    # map copies a 99999-item list 300 times in C: about 240 MiB if nothing stopped it.
    limits = SandboxLimits(memory=64 * 2**20, seconds=30)
    code = "row = list(range(99999))\ncopies = list(map(tuple, [row] * 300))"
    assert run(code, home, limits).error_code == "memory_limit"


# --- all or nothing ------------------------------------------------------------------------------


def test_successful_code_commits_every_call(home: Home) -> None:
    ok(
        run(
            TURN_ON_KETTLE + 'call_service("switch", "turn_on", entity_id="switch.hall_light")',
            home,
        )
    )
    assert home.state("switch.kettle").state == home.state("switch.hall_light").state == "on"


@pytest.mark.parametrize(
    "failure",
    [
        "x = 1 / 0",
        'call_service("switch", "turn_on", entity_id="switch.nope")',
        'call_service("switch", "turn_on", entity_id="switch.kettle", brightness=3)',
        "while True:\n    pass",
        "'a' * 10**10",
        'call_service("lock", "unlock", entity_id="lock.front_door")',
    ],
)
def test_failing_code_undoes_its_earlier_calls(home: Home, failure: str) -> None:
    home.now += 5
    code = TURN_ON_KETTLE + f'call_service("homeassistant", "turn_on", area_id="hall")\n{failure}'
    result = unchanged(home, code, limits=SandboxLimits(steps=1000), auditor=CONFIRMING_POLICY)
    assert len(result.calls) >= 2


def test_the_host_interrupting_a_run_still_leaves_the_home_as_it_was(
    home: Home, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = 0
    call_service = home.call_service

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise KeyboardInterrupt
        return call_service(*args, **kwargs)

    monkeypatch.setattr(home, "call_service", interrupted)
    states = dict(home.states)
    with pytest.raises(KeyboardInterrupt):
        run(TURN_ON_KETTLE + TURN_ON_KETTLE.replace("kettle", "hall_light"), home)
    assert home.states == states


def test_auditor_screens_each_call(home: Home) -> None:
    result = unchanged(
        home,
        TURN_ON_KETTLE + 'call_service("lock", "unlock", entity_id="lock.front_door")',
        auditor=CONFIRMING_POLICY,
    )
    assert result.error_code == "confirmation_required"
    assert result.error == (
        "ActionDeniedError: lock.unlock on lock.front_door needs the user's confirmation: ask "
        "the user whether to do it, and make the same call again once they say yes (line 2)"
    )
    result = unchanged(home, 'call_service("shell_command", "wipe")', auditor=DEFAULT_POLICY)
    assert result.error_code == "forbidden_domain"
    verdict = DEFAULT_POLICY.verdict_for(result.error_code or "", result.error or "")
    assert verdict.penalty == -1.0


_SWITCHES = ["switch.kettle", "switch.hall_light"]
_STEPS = st.one_of(
    st.tuples(st.sampled_from(["turn_on", "turn_off", "toggle"]), st.sampled_from(_SWITCHES)),
    st.just(("fail", "")),
)


@settings(max_examples=100, deadline=None)
@given(steps=st.lists(_STEPS, max_size=6))
def test_runs_are_all_or_nothing(steps: list[tuple[str, str]]) -> None:
    home = Home()
    for entity_id in _SWITCHES:
        home.add_entity(EntityEntry(entity_id, entity_id), "off")
    expected = home.copy()
    lines = []
    for service, entity_id in steps:
        if service == "fail":
            lines.append("x = 1 / 0")
            break
        lines.append(f'call_service("switch", "{service}", entity_id="{entity_id}")')
        expected.call_service("switch", service, {"entity_id": entity_id})
    before = dict(home.states)
    result = run("\n".join(lines), home)
    assert home.states == (before if ("fail", "") in steps else expected.states)
    assert result.ok is (("fail", "") not in steps)
