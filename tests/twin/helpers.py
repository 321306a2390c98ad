"""Helper entities (input_boolean, input_number, input_select, script) as Home Assistant writes
them, for the twin's tests and the integration's."""

from __future__ import annotations

from twin.home import Home
from twin.registry import EntityEntry

BOOLEAN = "input_boolean.guest_mode"
NUMBER = "input_number.target_humidity"
SELECT = "input_select.house_mode"
SCRIPT = "script.movie_night"
OPTIONS = ["Home", "Away", "Night"]


def add_helpers(home: Home, area_id: str | None = None) -> None:
    """One helper of each domain and a script, with the attributes Home Assistant gives them set
    up from YAML: helpers not editable, the number with an initial value, and a script in
    `single` mode that has not run."""
    home.add_entity(EntityEntry(BOOLEAN, "Guest mode", area_id=area_id), "off", {"editable": False})
    number = {"min": 30.0, "max": 60.0, "step": 2.5, "mode": "slider"}
    home.add_entity(
        EntityEntry(
            NUMBER, "Target humidity", area_id=area_id, unit_of_measurement="%", capabilities=number
        ),
        "45.0",
        {"initial": 45.0, "editable": False},
    )
    home.add_entity(
        EntityEntry(SELECT, "House mode", area_id=area_id),
        "Home",
        {"options": OPTIONS, "editable": False},
    )
    home.add_entity(
        EntityEntry(SCRIPT, "Movie night", area_id=area_id),
        "off",
        {"last_triggered": None, "mode": "single", "current": 0},
    )
