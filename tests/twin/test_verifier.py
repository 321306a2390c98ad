"""The verifier over a sequence of service calls: statuses, done, step rewards and collateral."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.conditions import compile_condition
from twin.errors import ConditionError, InvalidServiceDataError
from twin.home import Home
from twin.registry import Area, EntityEntry, Floor
from twin.verifier import ConditionStatus, Report, Verifier

KETTLE_ON = 'state("switch.kettle_plug") == "on"'
HALL_OFF = 'state("switch.hall_light") == "off"'
PORCH_AS_WAS = 'unchanged("switch.porch_light")'
THIRD = 1 / 3


@pytest.fixture
def home() -> Home:
    """A kettle plug in the kitchen, hall and porch wall switches, a desk lamp plug and a study
    thermometer; everything starts off."""
    home = Home("Test home")
    home.add_floor(Floor("ground", "Ground floor"))
    for area_id in ("kitchen", "hall", "study"):
        home.add_area(Area(area_id, area_id.title(), "ground"))
    catalog = load_catalog()
    catalog["smart_plug"].install(home, "kettle", "Kettle plug", "kitchen")
    catalog["wall_switch"].install(home, "hall", "Hall light", "hall")
    catalog["wall_switch"].install(home, "porch", "Porch light")
    catalog["smart_plug"].install(home, "desk", "Desk lamp", "study")
    home.add_entity(
        EntityEntry("sensor.study_temperature", "Study temperature", None, "study", "temperature"),
        "21.0",
    )
    return home


def call(home: Home, service: str, entity_id: str) -> None:
    home.now += 30
    home.call_service("switch", service, target={"entity_id": entity_id})


def satisfied(report: Report) -> list[bool]:
    return [status.satisfied for status in report.conditions]


def newly(report: Report) -> list[bool]:
    return [status.newly_satisfied for status in report.conditions]


def test_a_sequence_of_service_calls(home: Home) -> None:
    verifier = Verifier(home, [KETTLE_ON, HALL_OFF, PORCH_AS_WAS])

    # Turning the hall light on breaks a condition that held at the start.
    call(home, "turn_on", "switch.hall_light")
    report = verifier.step(home)
    assert satisfied(report) == [False, False, True]
    assert newly(report) == [False, False, False]
    assert report.reward == pytest.approx(-THIRD)
    assert not report.done
    assert report.collateral == ()

    call(home, "turn_on", "switch.kettle_plug")
    report = verifier.step(home)
    assert report.conditions[0] == ConditionStatus(KETTLE_ON, True, True, None)
    assert report.reward == pytest.approx(THIRD)
    assert not report.done

    call(home, "turn_off", "switch.hall_light")
    report = verifier.step(home)
    assert satisfied(report) == [True, True, True]
    assert newly(report) == [False, True, False]
    assert report.reward == pytest.approx(THIRD)
    assert report.done

    # Nothing new happened: no reward, nothing newly satisfied, still done.
    report = verifier.step(home)
    assert (report.reward, report.done, any(newly(report))) == (0.0, True, False)

    # The desk lamp is no condition's business: collateral, though the task stays done.
    call(home, "turn_on", "switch.desk_lamp")
    report = verifier.step(home)
    assert report.collateral == ("switch.desk_lamp",)
    assert (report.reward, report.done) == (0.0, True)

    # Turned back off it is as it was; its timestamps are not a change.
    call(home, "turn_off", "switch.desk_lamp")
    assert home.state("switch.desk_lamp").last_changed != verifier.start.now
    assert verifier.step(home).collateral == ()

    # Touching the porch light breaks unchanged(); putting it back as it was restores it.
    call(home, "toggle", "switch.porch_light")
    report = verifier.step(home)
    assert satisfied(report) == [True, True, False]
    assert report.reward == pytest.approx(-THIRD)
    assert not report.done
    assert report.collateral == ()
    call(home, "toggle", "switch.porch_light")
    report = verifier.step(home)
    assert newly(report) == [False, False, True]
    assert report.done


def test_statuses_carry_the_condition_texts(home: Home) -> None:
    report = Verifier(home, [KETTLE_ON, HALL_OFF]).step(home)
    assert [status.text for status in report.conditions] == [KETTLE_ON, HALL_OFF]
    assert report == Report(
        (ConditionStatus(KETTLE_ON, False, False), ConditionStatus(HALL_OFF, True, False)),
        done=False,
        reward=0.0,
        collateral=(),
    )


def test_conditions_true_at_the_start_earn_nothing(home: Home) -> None:
    report = Verifier(home, [HALL_OFF, PORCH_AS_WAS]).step(home)
    assert report.done
    assert report.reward == 0.0
    assert not any(newly(report))


def test_a_failed_call_changes_nothing_the_verifier_sees(home: Home) -> None:
    verifier = Verifier(home, [KETTLE_ON])
    with pytest.raises(InvalidServiceDataError):
        home.call_service(
            "switch", "turn_on", {"brightness": 3}, target={"entity_id": "switch.kettle_plug"}
        )
    report = verifier.step(home)
    assert (report.reward, report.done, report.collateral) == (0.0, False, ())


def test_area_wide_calls_are_collateral_except_where_conditions_look(home: Home) -> None:
    verifier = Verifier(home, [KETTLE_ON])
    home.call_service("homeassistant", "turn_on", target={"floor_id": "ground"})
    report = verifier.step(home)
    assert report.done
    assert report.reward == 1.0
    assert report.collateral == ("switch.hall_light", "switch.desk_lamp")


def test_sensors_and_physics_attributes_are_not_collateral(home: Home) -> None:
    verifier = Verifier(home, [KETTLE_ON])
    # Stand-ins for the room physics: a sensor reading and a measured attribute move.
    sensor = home.state("sensor.study_temperature")
    home.states[sensor.entity_id] = replace(sensor, state="23.5")
    power = home.state("sensor.kettle_plug_power")
    home.states[power.entity_id] = replace(power, state="2000.0")
    porch = home.state("switch.porch_light")
    moved = {**porch.attributes, "current_temperature": 30.0}
    home.states[porch.entity_id] = replace(porch, attributes=moved)
    assert verifier.step(home).collateral == ()
    # Any other attribute is the agent's doing, even one that merely appears.
    home.states[porch.entity_id] = replace(porch, attributes={**moved, "icon": None})
    assert verifier.step(home).collateral == ("switch.porch_light",)


def test_a_condition_that_cannot_be_evaluated_reports_its_error(home: Home) -> None:
    clash = 'attr("switch.desk_lamp", "friendly_name") > 3'
    verifier = Verifier(home, [clash, HALL_OFF])
    report = verifier.step(home)
    status = report.conditions[0]
    assert (status.satisfied, status.newly_satisfied) == (False, False)
    assert status.error is not None
    assert "cannot compare 'Desk lamp' > 3" in status.error
    assert report.conditions[1].error is None
    assert not report.done


def test_a_condition_that_errors_after_holding_counts_as_broken(home: Home) -> None:
    verifier = Verifier(home, [HALL_OFF, 'num("sensor.study_temperature") + 1 > 20'])
    temperature = home.state("sensor.study_temperature")
    home.states[temperature.entity_id] = replace(temperature, state="unavailable")
    report = verifier.step(home)
    assert satisfied(report) == [True, False]
    assert report.reward == pytest.approx(-0.5)


def test_conditions_are_validated_against_the_home(home: Home) -> None:
    with pytest.raises(ConditionError, match=r"lacks: entity switch\.gone, area 'attic'"):
        Verifier(home, ['state("switch.gone") == "on" and area("attic").co2 < 800'])
    with pytest.raises(ConditionError, match="line 1, column 1"):
        Verifier(home, ["getattr(1, 'x')"])


def test_compiled_conditions_are_accepted(home: Home) -> None:
    verifier = Verifier(home, [compile_condition(KETTLE_ON), HALL_OFF])
    assert verifier.conditions == (compile_condition(KETTLE_ON), compile_condition(HALL_OFF))


def test_no_conditions_means_done_from_the_start(home: Home) -> None:
    call(home, "turn_on", "switch.kettle_plug")
    report = Verifier(home, []).step(home)
    assert report == Report((), done=True, reward=0.0, collateral=())


SWITCHES = ("switch.kettle_plug", "switch.hall_light", "switch.porch_light", "switch.desk_lamp")


@given(
    goals=st.lists(st.sampled_from(SWITCHES[:3]), min_size=1, max_size=3, unique=True),
    toggles=st.lists(st.sampled_from(SWITCHES), max_size=12),
)
def test_rewards_add_up_to_the_progress_made(goals: list[str], toggles: list[str]) -> None:
    home = Home()
    home.add_area(Area("hall", "Hall"))
    for entity_id in SWITCHES:
        home.add_entity(EntityEntry(entity_id, entity_id, area_id="hall"), "off")
    conditions = [f'state("{entity_id}") == "on"' for entity_id in goals]
    verifier = Verifier(home, conditions)
    total = 0.0
    report = verifier.step(home)
    for entity_id in toggles:
        home.call_service("switch", "toggle", target={"entity_id": entity_id})
        report = verifier.step(home)
        total += report.reward
    on = {entity_id for entity_id in SWITCHES if home.state(entity_id).state == "on"}
    assert total == pytest.approx(len(on & set(goals)) / len(goals))
    assert report.done == (set(goals) <= on)
    assert set(report.collateral) == on - set(goals)


def test_a_reply_check_holds_from_the_agents_reply_on_and_what_it_reads_stays_collateral(
    home: Home,
) -> None:
    """says() reads the latest reply the verifier is given; the entity a reply check reads is
    no goal of the task, so changing it is collateral (a question is not an order)."""
    verifier = Verifier(home, ['says(num("sensor.study_temperature"))'])
    assert not verifier.step(home).done
    report = verifier.step(home, "It's 21 degrees in the study.")
    assert report.done
    assert report.reward == 1.0
    assert verifier.step(home).done  # the reply stands until the next one
    assert not verifier.step(home, "I don't know.").done
    asked = Verifier(home, ['says(state("switch.hall_light") == "off")'])
    call(home, "turn_on", "switch.hall_light")
    report = asked.step(home, "No, the hall light is on.")
    assert report.done
    assert report.collateral == ("switch.hall_light",)
