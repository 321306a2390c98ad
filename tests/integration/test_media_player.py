"""Media players: Home Assistant's media player services act on the twin, and HA shows the twin.

Every call goes through Home Assistant and, unchanged, to an independent twin; Home Assistant's
state, the integration's twin and the independent twin must agree, types included. One test runs
Home Assistant's own volume_up and volume_down (volume_set, one volume_step away) against the
twin's.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from homeassistant.components.media_player import MediaPlayerEntity
from homeassistant.components.media_player.const import DATA_COMPONENT
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceNotSupported
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry

from twin.catalog import load_catalog
from twin.home import Home

from .parity import as_json, assert_same, call_both, catalog_types, independent_twin

CATALOG = load_catalog()
PLAYER_TYPES = catalog_types("media_player")
TV = "media_player.smart_tv"
SOUNDBAR = "media_player.soundbar"
SPEAKER = "media_player.smart_speaker"
BOX = "media_player.streaming_box"
PLAYERS = [TV, SOUNDBAR, SPEAKER, BOX]
# What an off player shows: its capabilities and the entity's own attributes, nothing else.
SHOWN_WHEN_OFF = {"source_list", "sound_mode_list", "device_class", "friendly_name"}


class Players:
    """The loaded home in Home Assistant and an independent twin, given the same calls."""

    def __init__(self, hass: HomeAssistant, entry: MockConfigEntry) -> None:
        self.hass = hass
        self.entry = entry
        self.other: Home = independent_twin(entry)

    async def call(self, service: str, entity_id: str, **data: Any) -> str | None:
        """A media_player service both ways; None if accepted, else the (agreed) error code."""
        return await self.call_on({"entity_id": entity_id}, service, **data)

    async def call_on(self, target: dict[str, Any], service: str, **data: Any) -> str | None:
        """A media_player service on any target (in the twin's ids), both ways."""
        return await call_both(
            self.hass, self.entry, self.other, "media_player", service, target, data
        )

    def shown(self, entity_id: str) -> dict[str, Any]:
        """The state and attributes Home Assistant shows."""
        state = self.hass.states.get(entity_id)
        assert state is not None
        return {"state": state.state, **state.attributes}


@pytest.fixture
async def players(hass: HomeAssistant, loaded_home: MockConfigEntry) -> Players:
    """The loaded home's players and their independent twin."""
    return Players(hass, loaded_home)


# --- every device type --------------------------------------------------------------------------


async def test_the_home_has_every_catalog_player(players: Players) -> None:
    twin = players.entry.runtime_data.home
    assert sorted(e for e in twin.entities if e.startswith("media_player.")) == sorted(PLAYERS)
    assert sorted(f"media_player.{type_id}" for type_id in PLAYER_TYPES) == sorted(PLAYERS)


@pytest.mark.parametrize("type_id", PLAYER_TYPES)
async def test_every_player_type_shows_the_twin_off_on_and_playing(
    hass: HomeAssistant, players: Players, type_id: str
) -> None:
    entity_id = f"media_player.{type_id}"
    registered = er.async_get(hass).async_get(entity_id)
    assert registered is not None
    assert registered.unique_id == f"{players.entry.entry_id}_{entity_id}"
    twin = players.entry.runtime_data.home.states[entity_id]
    state = hass.states.get(entity_id)
    assert as_json(state.state, state.attributes) == as_json(twin.state, twin.attributes)
    assert state.attributes["supported_features"] == twin.attributes["supported_features"]
    assert state.attributes["device_class"] == CATALOG[type_id].entities[0].device_class
    if entity_id != SPEAKER:
        assert await players.call("turn_on", entity_id) is None
    assert await players.call("media_play", entity_id) is None
    assert players.shown(entity_id)["state"] == "playing"
    assert "media_content_id" in players.shown(entity_id)


async def test_an_off_player_shows_none_of_its_state_attributes(players: Players) -> None:
    assert set(players.shown(SOUNDBAR)) == {"state", "supported_features", *SHOWN_WHEN_OFF}
    assert await players.call("turn_on", SOUNDBAR) is None
    assert await players.call("select_sound_mode", SOUNDBAR, sound_mode="Night") is None
    assert await players.call("media_play", SOUNDBAR) is None
    assert await players.call("turn_off", SOUNDBAR) is None
    assert set(players.shown(SOUNDBAR)) == {"state", "supported_features", *SHOWN_WHEN_OFF}
    # Settings changed while off are remembered and show once the player is on again.
    assert await players.call("volume_set", SOUNDBAR, volume_level=0.6) is None
    assert await players.call("volume_up", SOUNDBAR) is None
    assert "volume_level" not in players.shown(SOUNDBAR)
    assert await players.call("turn_on", SOUNDBAR) is None
    shown = players.shown(SOUNDBAR)
    assert (shown["volume_level"], shown["sound_mode"], shown["source"]) == (0.7, "Night", "TV")
    assert "media_title" not in shown


# --- services -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entity_id", "calls", "expected"),
    [
        (TV, [("turn_on", {})], {"state": "on", "volume_level": 0.25, "source": "HDMI 1"}),
        (TV, [("turn_on", {}), ("turn_off", {})], {"state": "off"}),
        (TV, [("toggle", {})], {"state": "on", "is_volume_muted": False}),
        (TV, [("toggle", {}), ("toggle", {})], {"state": "off"}),
        (SPEAKER, [("media_play", {})], {"state": "playing", "media_title": "Clair de lune"}),
        (
            TV,
            [("media_play", {})],
            {"state": "playing", "media_series_title": "The Quiet Coast", "media_episode": "1"},
        ),
        (SPEAKER, [("media_play", {}), ("media_pause", {})], {"state": "paused"}),
        (SPEAKER, [("media_pause", {})], {"state": "idle"}),
        (SPEAKER, [("media_play_pause", {})], {"state": "playing"}),
        (SPEAKER, [("media_play", {}), ("media_play_pause", {})], {"state": "paused"}),
        (
            SPEAKER,
            [("media_play", {}), ("media_play_pause", {}), ("media_play_pause", {})],
            {"state": "playing"},
        ),
        (TV, [("media_play", {}), ("media_stop", {})], {"state": "on"}),
        (SPEAKER, [("media_play", {}), ("media_stop", {})], {"state": "idle"}),
        (
            SPEAKER,
            [("media_play", {}), ("media_next_track", {}), ("media_next_track", {})],
            {"media_title": "Spring: Allegro", "media_track": 3},
        ),
        (
            SPEAKER,
            [("media_play", {}), ("media_next_track", {}), ("media_previous_track", {})],
            {"media_title": "Clair de lune", "media_album_name": "Suite bergamasque"},
        ),
        (
            SPEAKER,
            [("repeat_set", {"repeat": "all"}), ("media_play", {}), ("media_previous_track", {})],
            {"media_title": "Für Elise", "repeat": "all"},
        ),
        (SPEAKER, [("volume_set", {"volume_level": 0.6})], {"volume_level": 0.6}),
        (SPEAKER, [("volume_set", {"volume_level": "0.3"})], {"volume_level": 0.3}),
        (SPEAKER, [("volume_set", {"volume_level": 1})], {"volume_level": 1.0}),
        (SPEAKER, [("volume_mute", {"is_volume_muted": True})], {"is_volume_muted": True}),
        (SPEAKER, [("volume_mute", {"is_volume_muted": "off"})], {"is_volume_muted": False}),
        (SPEAKER, [("volume_up", {})], {"volume_level": 0.35}),
        (SPEAKER, [("volume_down", {})], {"volume_level": 0.15}),
        (
            SPEAKER,
            [("volume_set", {"volume_level": 0.95}), ("volume_up", {})],
            {"volume_level": 1.0},
        ),
        (
            SPEAKER,
            [("volume_set", {"volume_level": 1}), ("volume_up", {})],
            {"volume_level": 1.0},
        ),
        (
            SPEAKER,
            [("volume_set", {"volume_level": 0.05}), ("volume_down", {})],
            {"volume_level": 0.0},
        ),
        (
            SPEAKER,
            [("volume_set", {"volume_level": 0}), ("volume_down", {})],
            {"volume_level": 0.0},
        ),
        # volume_step without volume_set: Home Assistant's volume_up can do nothing.
        (BOX, [("turn_on", {}), ("volume_up", {}), ("volume_down", {})], {"state": "on"}),
        (TV, [("turn_on", {}), ("select_source", {"source": "Netflix"})], {"source": "Netflix"}),
        (
            SOUNDBAR,
            [("turn_on", {}), ("select_sound_mode", {"sound_mode": "Movie"})],
            {"sound_mode": "Movie"},
        ),
        (SPEAKER, [("shuffle_set", {"shuffle": True})], {"shuffle": True}),
        (SPEAKER, [("shuffle_set", {"shuffle": "yes"})], {"shuffle": True}),
        (SPEAKER, [("repeat_set", {"repeat": "one"})], {"repeat": "one"}),
        (
            SPEAKER,
            [("play_media", {"media_content_id": "radio://jazz", "media_content_type": "music"})],
            {"state": "playing", "media_content_id": "radio://jazz", "media_content_type": "music"},
        ),
        (
            BOX,
            [
                (
                    "play_media",
                    {"media": {"media_content_id": "netflix://1", "media_content_type": "video"}},
                )
            ],
            {"state": "playing", "media_content_id": "netflix://1", "media_content_type": "video"},
        ),
        (
            TV,
            [
                (
                    "play_media",
                    {
                        "media_content_id": "tv://news",
                        "media_content_type": "channel",
                        "enqueue": "replace",
                        "extra": {"title": "News"},
                    },
                )
            ],
            {"state": "playing", "media_content_id": "tv://news"},
        ),
        (
            SPEAKER,
            [
                (
                    "play_media",
                    {"media_content_id": "a", "media_content_type": "music", "enqueue": "add"},
                )
            ],
            {"state": "idle"},
        ),
        (
            SPEAKER,
            [
                (
                    "play_media",
                    {"media_content_id": "a", "media_content_type": "music", "enqueue": True},
                )
            ],
            {"state": "idle"},
        ),
        (
            SPEAKER,
            [
                (
                    "play_media",
                    {"media_content_id": "a", "media_content_type": "music", "announce": True},
                )
            ],
            {"state": "idle"},
        ),
    ],
)
async def test_services_act_on_the_twin(
    players: Players,
    entity_id: str,
    calls: list[tuple[str, dict[str, Any]]],
    expected: dict[str, Any],
) -> None:
    for service, data in calls:
        assert await players.call(service, entity_id, **data) is None
    assert players.shown(entity_id) | expected == players.shown(entity_id)


def volume(home: Home, entity_id: str) -> Any:
    """A player's volume level, shown or (while it is off) remembered."""
    state = home.states[entity_id]
    return {**state.hidden, **state.attributes}.get("volume_level")


@pytest.mark.parametrize("entity_id", [SPEAKER, SOUNDBAR])
@pytest.mark.parametrize("level", [0, 0.05, 0.25, 0.3, 0.95, 1])
async def test_home_assistants_own_volume_steps_agree_with_the_twins(
    hass: HomeAssistant, players: Players, entity_id: str, level: float
) -> None:
    """HA's MediaPlayerEntity.async_volume_up/down (volume_set, one volume_step away) leave the
    level the twin's volume_up/down do, whether the player is on (speaker) or off (soundbar)."""
    entity = hass.data[DATA_COMPONENT].get_entity(entity_id)
    assert entity is not None
    twin = players.entry.runtime_data.home
    for base, service in [
        (MediaPlayerEntity.async_volume_up, "volume_up"),
        (MediaPlayerEntity.async_volume_down, "volume_down"),
    ]:
        assert await players.call("volume_set", entity_id, volume_level=level) is None
        await base(entity)
        players.other.call_service("media_player", service, {}, {"entity_id": entity_id})
        assert volume(twin, entity_id) == volume(players.other, entity_id)


async def test_repeat_reaches_the_twin_as_a_plain_string(players: Players) -> None:
    assert await players.call("repeat_set", SPEAKER, repeat="all") is None
    assert type(players.entry.runtime_data.home.states[SPEAKER].attributes["repeat"]) is str


@pytest.mark.parametrize(
    ("entity_id", "service", "data", "code"),
    [
        (SPEAKER, "volume_set", {"volume_level": 1.5}, "invalid_data"),
        (SPEAKER, "volume_set", {"volume_level": -0.1}, "invalid_data"),
        (SPEAKER, "volume_set", {"volume_level": "loud"}, "invalid_data"),
        (SPEAKER, "volume_set", {}, "invalid_data"),
        (SPEAKER, "volume_set", {"volume": 0.5}, "invalid_data"),
        (SPEAKER, "volume_mute", {"is_volume_muted": "maybe"}, "invalid_data"),
        (SPEAKER, "volume_mute", {}, "invalid_data"),
        (SPEAKER, "shuffle_set", {"shuffle": None}, "invalid_data"),
        (SPEAKER, "repeat_set", {"repeat": "sometimes"}, "invalid_data"),
        (SPEAKER, "repeat_set", {"repeat": True}, "invalid_data"),
        (SPEAKER, "media_play", {"media_content_id": "a"}, "invalid_data"),
        (SPEAKER, "play_media", {"media_content_id": "a"}, "invalid_data"),
        (SPEAKER, "play_media", {"media_content_type": "music"}, "invalid_data"),
        (
            SPEAKER,
            "play_media",
            {"media_content_id": "a", "media_content_type": "music", "enqueue": "later"},
            "invalid_data",
        ),
        (
            SPEAKER,
            "play_media",
            {
                "media_content_id": "a",
                "media_content_type": "music",
                "enqueue": "add",
                "announce": True,
            },
            "invalid_data",
        ),
        (
            SPEAKER,
            "play_media",
            {"media": {"media_content_id": "a"}, "media_content_type": "music"},
            "invalid_data",
        ),
        (
            SPEAKER,
            "play_media",
            {"media_content_id": "a", "media_content_type": "music", "extra": "x"},
            "invalid_data",
        ),
        (TV, "select_source", {"source": "VHS"}, "validation_error"),
        (TV, "select_source", {"source": ["HDMI 1"]}, "invalid_data"),
        (SOUNDBAR, "select_sound_mode", {"sound_mode": "Stadium"}, "validation_error"),
        (TV, "select_sound_mode", {"sound_mode": "Movie"}, "service_not_supported"),
        (TV, "shuffle_set", {"shuffle": True}, "service_not_supported"),
        (TV, "repeat_set", {"repeat": "all"}, "service_not_supported"),
        (
            SOUNDBAR,
            "play_media",
            {"media_content_id": "a", "media_content_type": "music"},
            "service_not_supported",
        ),
        (SPEAKER, "turn_on", {}, "service_not_supported"),
        (SPEAKER, "turn_off", {}, "service_not_supported"),
        (SPEAKER, "toggle", {}, "service_not_supported"),
        (SPEAKER, "select_source", {"source": "TV"}, "service_not_supported"),
        (BOX, "volume_set", {"volume_level": 0.5}, "service_not_supported"),
        (BOX, "volume_mute", {"is_volume_muted": True}, "service_not_supported"),
    ],
)
async def test_refused_calls_change_nothing(
    players: Players, entity_id: str, service: str, data: dict[str, Any], code: str
) -> None:
    if entity_id != SPEAKER:
        assert await players.call("turn_on", entity_id) is None
    before = players.shown(entity_id)
    assert await players.call(service, entity_id, **data) == code
    assert players.shown(entity_id) == before


async def test_media_services_the_twin_does_not_model_are_unsupported(
    hass: HomeAssistant, players: Players
) -> None:
    """No player offers seek, clear_playlist or grouping; Home Assistant refuses them."""
    for service, data in [
        ("media_seek", {"seek_position": 10}),
        ("clear_playlist", {}),
        ("join", {"group_members": [TV]}),
        ("unjoin", {}),
    ]:
        with pytest.raises(ServiceNotSupported):
            await hass.services.async_call(
                "media_player", service, {"entity_id": SPEAKER, **data}, blocking=True
            )
    assert_same(hass, players.entry, players.other, "media_player")


async def test_area_and_all_targets_skip_players_without_the_feature(players: Players) -> None:
    """As in Home Assistant: only the players a call names must support its action."""
    area = players.entry.runtime_data.home.area_of(SPEAKER)
    assert await players.call_on({"area_id": area}, "turn_on") is None
    assert await players.call_on({"entity_id": "all"}, "turn_on") is None
    assert players.shown(BOX)["state"] == "on"
    assert await players.call_on({"entity_id": "all"}, "volume_mute", is_volume_muted=True) is None
    assert players.shown(SPEAKER)["is_volume_muted"] is True
    target = {"entity_id": [SPEAKER, BOX]}
    code = await players.call_on(target, "volume_mute", is_volume_muted=False)
    assert code == "service_not_supported"
    assert players.shown(SPEAKER)["is_volume_muted"] is True


# --- many random calls --------------------------------------------------------------------------

SOURCES = sorted(
    {
        source
        for device_type in CATALOG.values()
        for spec in device_type.entities
        for source in spec.capabilities.get("source_list") or ()
    }
)
SOUND_MODES = ["Standard", "Movie", "Night", "Stadium"]


def random_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    """One media_player service, with data that is valid more often than not."""
    service = rng.choice(
        [
            "turn_on",
            "turn_off",
            "toggle",
            "media_play",
            "media_pause",
            "media_play_pause",
            "media_stop",
            "media_next_track",
            "media_previous_track",
            "volume_set",
            "volume_mute",
            "volume_up",
            "volume_up",
            "volume_down",
            "volume_down",
            "select_source",
            "select_sound_mode",
            "shuffle_set",
            "repeat_set",
            "play_media",
        ]
    )
    data: dict[str, Any] = {}
    if service == "volume_set":
        data["volume_level"] = rng.choice(
            [round(rng.uniform(0, 1), 2), rng.choice([0, 1, 0.05, 0.95]), "0.5", 1.2, -0.1, "x"]
        )
    elif service == "volume_mute":
        data["is_volume_muted"] = rng.choice([True, False, "on", "off", "maybe"])
    elif service == "select_source":
        data["source"] = rng.choice([*SOURCES, "VHS"])
    elif service == "select_sound_mode":
        data["sound_mode"] = rng.choice(SOUND_MODES)
    elif service == "shuffle_set":
        data["shuffle"] = rng.choice([True, False, "yes", None])
    elif service == "repeat_set":
        data["repeat"] = rng.choice(["off", "all", "one", "never"])
    elif service == "play_media":
        data = {
            "media_content_id": f"homeflow://{rng.randint(1, 9)}",
            "media_content_type": "music",
        }
        extra = rng.choice(
            [{}, {"enqueue": "play"}, {"enqueue": "add"}, {"announce": True}, {"enqueue": "x"}]
        )
        data |= extra
    if rng.random() < 0.03:
        data["bogus"] = 1
    return service, data


@pytest.mark.parametrize("seed", [1, 2])
async def test_random_calls_keep_home_assistant_and_the_twins_equal(
    players: Players, seed: int
) -> None:
    rng = random.Random(seed)
    outcomes = []
    for _ in range(300):
        service, data = random_call(rng)
        outcomes.append(await players.call(service, rng.choice(PLAYERS), **data))
    assert set(outcomes) == {None, "invalid_data", "validation_error", "service_not_supported"}
    assert outcomes.count(None) > 120
    start = independent_twin(players.entry)
    assert all(players.other.states[e] != start.states[e] for e in PLAYERS)
