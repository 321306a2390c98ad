"""Renaming areas and entities, as Home Assistant's registry updates do."""

from __future__ import annotations

import pytest

from twin.errors import HomeDefinitionError
from twin.homemaker import make_home


def test_a_rename_changes_names_and_friendly_names_and_nothing_else() -> None:
    home = make_home(3, "house")
    before = {e: (s.state, dict(s.attributes)) for e, s in home.states.items()}
    home.rename({"living_room": "Wohnzimmer"}, {"light.living_room_floor_lamp": "Stehlampe"})
    assert home.areas["living_room"].name == "Wohnzimmer"
    assert home.entities["light.living_room_floor_lamp"].name == "Stehlampe"
    state = home.states["light.living_room_floor_lamp"]
    assert state.attributes["friendly_name"] == "Stehlampe"
    for entity_id, (value, attributes) in before.items():
        now = home.states[entity_id]
        assert now.state == value
        rest = {k: v for k, v in now.attributes.items() if k != "friendly_name"}
        assert rest == {k: v for k, v in attributes.items() if k != "friendly_name"}


def test_renaming_what_is_not_there_renames_nothing() -> None:
    home = make_home(3, "house")
    with pytest.raises(HomeDefinitionError, match=r"No entity with id 'light\.nope'"):
        home.rename({"living_room": "Salon"}, {"light.nope": "Nope"})
    assert home.areas["living_room"].name == "Living Room"
