"""media_player: HA's schemas, features, toggle and volume steps; hidden settings while off."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from twin.catalog import load_catalog
from twin.domains.media_player import DOMAIN, EPISODES, MUSIC
from twin.errors import (
    InvalidServiceDataError,
    ServiceNotSupportedError,
    ServiceValidationError,
)
from twin.home import Home, ServiceResult
from twin.homefile import export_ha_snapshot, import_ha_snapshot
from twin.registry import Area, Device, EntityEntry

TV = "media_player.lounge_tv"
SPEAKER = "media_player.kitchen_speaker"
SOUNDBAR = "media_player.lounge_soundbar"
BOX = "media_player.lounge_box"
BARE = "media_player.bare"
SETTINGS = ("volume_level", "is_volume_muted", "source", "sound_mode", "shuffle", "repeat")
MEDIA_TYPES = ("smart_tv", "soundbar", "smart_speaker", "streaming_box")


def make_home() -> Home:
    """A lounge with a TV, a soundbar and a streaming box; a kitchen speaker; a bare player."""
    home = Home()
    home.add_area(Area("lounge", "Lounge"))
    home.add_area(Area("kitchen", "Kitchen"))
    catalog = load_catalog()
    catalog["smart_tv"].install(home, "tv", "Lounge TV", "lounge")
    catalog["soundbar"].install(home, "bar", "Lounge soundbar", "lounge")
    catalog["streaming_box"].install(home, "box", "Lounge box", "lounge")
    catalog["smart_speaker"].install(home, "speaker", "Kitchen speaker", "kitchen")
    home.add_device(Device("bare", "Bare", area_id="kitchen"))
    home.add_entity(EntityEntry(BARE, "Bare", device_id="bare"), "playing")
    return home


@pytest.fixture
def home() -> Home:
    return make_home()


def call(home: Home, service: str, entity_id: str | list[str], **data: Any) -> ServiceResult:
    return home.call_service("media_player", service, data, {"entity_id": entity_id})


def attrs(home: Home, entity_id: str) -> dict[str, Any]:
    return home.state(entity_id).attributes


def settings(home: Home, entity_id: str) -> dict[str, Any]:
    return {key: value for key, value in attrs(home, entity_id).items() if key in SETTINGS}


def media(home: Home, entity_id: str) -> dict[str, Any]:
    return {key: value for key, value in attrs(home, entity_id).items() if key.startswith("media_")}


# --- catalog -------------------------------------------------------------------------------------


@pytest.mark.parametrize("type_id", MEDIA_TYPES)
def test_catalog_players_show_lists_only_with_their_feature(type_id: str) -> None:
    home = Home()
    load_catalog()[type_id].install(home, "d", "Player")
    state = home.state("media_player.player")
    features = state.attributes["supported_features"]
    assert ("source_list" in state.attributes) == bool(features & 2048)
    assert ("sound_mode_list" in state.attributes) == bool(features & 65536)
    if state.state == "off":
        assert not set(state.attributes) & set(SETTINGS)


def test_catalog_features_are_home_assistants_values() -> None:
    assert DOMAIN.feature_flags(["pause", "volume_set", "turn_on", "select_sound_mode"]) == (
        1 | 4 | 128 | 65536
    )
    assert DOMAIN.feature_flags(["play", "repeat_set", "volume_step", "play_media"]) == (
        16384 | 262144 | 1024 | 512
    )


# --- power ---------------------------------------------------------------------------------------


def test_turn_on_shows_default_settings_and_rests(home: Home) -> None:
    call(home, "turn_on", TV)
    assert home.state(TV).state == "on"
    assert settings(home, TV) == {
        "volume_level": 0.25,
        "is_volume_muted": False,
        "source": "HDMI 1",
    }
    assert media(home, TV) == {}
    call(home, "turn_on", SOUNDBAR)
    assert home.state(SOUNDBAR).state == "idle"
    assert settings(home, SOUNDBAR) == {
        "volume_level": 0.25,
        "is_volume_muted": False,
        "source": "TV",
        "sound_mode": "Standard",
    }


def test_turn_on_leaves_a_playing_player_alone(home: Home) -> None:
    call(home, "media_play", TV)
    assert call(home, "turn_on", TV).changed == ()
    assert home.state(TV).state == "playing"


def test_turn_off_hides_settings_and_turn_on_restores_them(home: Home) -> None:
    call(home, "turn_on", TV)
    call(home, "volume_set", TV, volume_level=0.6)
    call(home, "select_source", TV, source="Netflix")
    call(home, "turn_off", TV)
    state = home.state(TV)
    assert state.state == "off"
    assert not set(state.attributes) & set(SETTINGS)
    assert "source_list" in state.attributes  # a capability: HA shows it while off
    call(home, "turn_on", TV)
    assert settings(home, TV) == {
        "volume_level": 0.6,
        "is_volume_muted": False,
        "source": "Netflix",
    }


def test_settings_changed_while_off_show_when_on(home: Home) -> None:
    call(home, "volume_set", TV, volume_level=0.4)
    call(home, "volume_mute", TV, is_volume_muted=True)
    call(home, "select_source", TV, source="HDMI 2")
    assert home.state(TV).state == "off"
    assert settings(home, TV) == {}
    call(home, "turn_on", TV)
    assert settings(home, TV) == {"volume_level": 0.4, "is_volume_muted": True, "source": "HDMI 2"}


@pytest.mark.parametrize(
    ("before", "after"),
    [("off", "on"), ("standby", "on"), ("on", "off"), ("playing", "off"), ("paused", "off")],
)
def test_toggle_follows_home_assistant(before: str, after: str) -> None:
    home = Home()
    entry = EntityEntry("media_player.tv", "TV", device_class="tv", supported_features=128 | 256)
    home.add_entity(entry, before)
    call(home, "toggle", "media_player.tv")
    assert home.state("media_player.tv").state == after


def test_standby_shows_settings_and_turn_on_wakes_it() -> None:
    home = Home()
    entry = EntityEntry("media_player.amp", "Amp", supported_features=128 | 256 | 4)
    home.add_entity(entry, "standby", {"volume_level": 0.3})
    call(home, "volume_up", "media_player.amp")
    assert attrs(home, "media_player.amp")["volume_level"] == 0.3 + 0.1
    call(home, "turn_on", "media_player.amp")
    assert home.state("media_player.amp").state == "idle"


def test_toggle_needs_both_turn_on_and_turn_off(home: Home) -> None:
    with pytest.raises(ServiceNotSupportedError, match=r"media_player\.toggle"):
        call(home, "toggle", SPEAKER)


def test_homeassistant_turn_off_skips_players_without_the_feature(home: Home) -> None:
    call(home, "turn_on", [TV, SOUNDBAR])
    home.call_service("homeassistant", "turn_off", target={"area_id": ["lounge", "kitchen"]})
    assert home.state(TV).state == "off"
    assert home.state(SOUNDBAR).state == "off"
    assert home.state(SPEAKER).state == "idle"


# --- playback ------------------------------------------------------------------------------------


def test_play_shows_the_current_track(home: Home) -> None:
    call(home, "media_play", SPEAKER)
    assert home.state(SPEAKER).state == "playing"
    assert media(home, SPEAKER) == MUSIC[0]
    assert media(home, SPEAKER)["media_title"] == "Clair de lune"


def test_play_wakes_a_tv_to_its_episode(home: Home) -> None:
    call(home, "media_play", TV)
    assert home.state(TV).state == "playing"
    assert media(home, TV) == EPISODES[0]
    assert settings(home, TV)["volume_level"] == 0.25


def test_pause_pauses_only_what_plays(home: Home) -> None:
    assert call(home, "media_pause", SPEAKER).changed == ()
    assert call(home, "media_pause", TV).changed == ()
    call(home, "media_play", SPEAKER)
    call(home, "media_pause", SPEAKER)
    assert home.state(SPEAKER).state == "paused"
    assert media(home, SPEAKER) == MUSIC[0]


@pytest.mark.parametrize(
    ("before", "after"), [("playing", "paused"), ("paused", "playing"), ("idle", "playing")]
)
def test_play_pause_follows_home_assistant(home: Home, before: str, after: str) -> None:
    if before != "idle":
        call(home, "media_play", SPEAKER)
    if before == "paused":
        call(home, "media_pause", SPEAKER)
    call(home, "media_play_pause", SPEAKER)
    assert home.state(SPEAKER).state == after


def test_stop_rests_and_play_resumes_the_same_track(home: Home) -> None:
    call(home, "media_play", [SPEAKER, TV])
    call(home, "media_next_track", SPEAKER)
    call(home, "media_stop", [SPEAKER, TV])
    assert home.state(SPEAKER).state == "idle"
    assert home.state(TV).state == "on"
    assert media(home, SPEAKER) == media(home, TV) == {}
    call(home, "media_play", SPEAKER)
    assert media(home, SPEAKER) == MUSIC[1]


def test_stop_leaves_an_off_or_standby_player_alone(home: Home) -> None:
    assert call(home, "media_stop", TV).changed == ()
    home.add_entity(EntityEntry("media_player.amp", "Amp", supported_features=4096), "standby")
    assert call(home, "media_stop", "media_player.amp").changed == ()


def test_next_and_previous_stop_at_the_ends(home: Home) -> None:
    call(home, "media_play", SPEAKER)
    assert call(home, "media_previous_track", SPEAKER).changed == ()
    for number in range(2, len(MUSIC) + 1):
        call(home, "media_next_track", SPEAKER)
        assert attrs(home, SPEAKER)["media_track"] == number
    assert call(home, "media_next_track", SPEAKER).changed == ()
    call(home, "media_previous_track", SPEAKER)
    assert media(home, SPEAKER) == MUSIC[-2]


def test_repeat_all_wraps_around_the_playlist(home: Home) -> None:
    call(home, "repeat_set", SPEAKER, repeat="all")
    call(home, "media_play", SPEAKER)
    call(home, "media_previous_track", SPEAKER)
    assert media(home, SPEAKER) == MUSIC[-1]
    call(home, "media_next_track", SPEAKER)
    assert media(home, SPEAKER) == MUSIC[0]


def test_next_while_idle_moves_silently_and_off_ignores_it(home: Home) -> None:
    call(home, "media_next_track", SPEAKER)
    assert media(home, SPEAKER) == {}
    call(home, "media_play", SPEAKER)
    assert media(home, SPEAKER) == MUSIC[1]
    assert call(home, "media_next_track", TV).changed == ()
    assert home.state(TV).hidden == {}


def test_tv_skips_episodes(home: Home) -> None:
    call(home, "media_play", TV)
    call(home, "media_next_track", TV)
    assert media(home, TV) == EPISODES[1]
    assert attrs(home, TV)["media_episode"] == "2"


# --- volume --------------------------------------------------------------------------------------


def test_volume_set_coerces_and_validates(home: Home) -> None:
    call(home, "volume_set", SPEAKER, volume_level="0.5")
    assert attrs(home, SPEAKER)["volume_level"] == 0.5
    call(home, "volume_set", SPEAKER, volume_level=1)
    assert attrs(home, SPEAKER)["volume_level"] == 1.0
    assert isinstance(attrs(home, SPEAKER)["volume_level"], float)


@pytest.mark.parametrize(
    "data",
    [{"volume_level": 1.2}, {"volume_level": -0.1}, {"volume_level": "loud"}, {}, {"volume": 0.5}],
)
def test_volume_set_rejects_bad_data(home: Home, data: dict[str, Any]) -> None:
    before = home.state(SPEAKER)
    with pytest.raises(InvalidServiceDataError, match=r"media_player\.volume_set"):
        call(home, "volume_set", SPEAKER, **data)
    assert home.state(SPEAKER) is before


@pytest.mark.parametrize(
    ("start", "service", "expected"),
    [
        (0.25, "volume_up", 0.25 + 0.1),
        (0.25, "volume_down", 0.25 - 0.1),
        (0.95, "volume_up", 1),
        (0.05, "volume_down", 0),
        (0.0, "volume_up", 0.1),
    ],
)
def test_volume_steps_as_home_assistant_does(
    home: Home, start: float, service: str, expected: float
) -> None:
    call(home, "volume_set", SPEAKER, volume_level=start)
    call(home, service, SPEAKER)
    level = attrs(home, SPEAKER)["volume_level"]
    # Same value and type as HA's min(1, level + step): an int at the bounds.
    assert (level, type(level)) == (expected, type(expected))


@pytest.mark.parametrize(("level", "service"), [(1.0, "volume_up"), (0.0, "volume_down")])
def test_volume_steps_stop_at_the_bounds(home: Home, level: float, service: str) -> None:
    call(home, "volume_set", SPEAKER, volume_level=level)
    assert call(home, service, SPEAKER).changed == ()


def test_volume_step_without_a_known_volume_changes_nothing(home: Home) -> None:
    call(home, "turn_on", BOX)
    assert call(home, "volume_up", BOX).changed == ()
    assert "volume_level" not in attrs(home, BOX)


@given(
    st.lists(
        st.one_of(
            st.sampled_from(["volume_up", "volume_down"]),
            st.floats(min_value=0, max_value=1),
        ),
        max_size=30,
    )
)
def test_volume_always_within_bounds(steps: list[str | float]) -> None:
    home = make_home()
    expected: float = 0.25
    for step in steps:
        if isinstance(step, float):
            call(home, "volume_set", SPEAKER, volume_level=step)
            expected = step
        elif step == "volume_up":
            call(home, step, SPEAKER)
            expected = min(1, expected + 0.1) if expected < 1 else expected
        else:
            call(home, step, SPEAKER)
            expected = max(0, expected - 0.1) if expected > 0 else expected
        level = attrs(home, SPEAKER)["volume_level"]
        assert 0 <= level <= 1
        assert level == expected


@pytest.mark.parametrize(
    ("value", "muted"), [(True, True), ("on", True), ("no", False), (0, False)]
)
def test_volume_mute_coerces_booleans(home: Home, value: Any, muted: bool) -> None:
    call(home, "volume_mute", SPEAKER, is_volume_muted=value)
    assert attrs(home, SPEAKER)["is_volume_muted"] is muted
    assert attrs(home, SPEAKER)["volume_level"] == 0.25


def test_volume_mute_rejects_non_booleans(home: Home) -> None:
    with pytest.raises(InvalidServiceDataError, match="is_volume_muted"):
        call(home, "volume_mute", SPEAKER, is_volume_muted="maybe")


# --- sources, sound modes, shuffle and repeat ----------------------------------------------------


def test_select_source_sets_one_of_the_sources(home: Home) -> None:
    call(home, "turn_on", TV)
    call(home, "select_source", TV, source="YouTube")
    assert attrs(home, TV)["source"] == "YouTube"


def test_select_source_rejects_an_unknown_source(home: Home) -> None:
    call(home, "turn_on", TV)
    before = home.state(TV)
    with pytest.raises(ServiceValidationError, match=r"no source 'HDMI 3'.*HDMI 1, HDMI 2"):
        call(home, "select_source", TV, source="HDMI 3")
    assert home.state(TV) is before


def test_select_source_coerces_to_string(home: Home) -> None:
    with pytest.raises(ServiceValidationError, match="no source '1'"):
        call(home, "select_source", TV, source=1)
    with pytest.raises(InvalidServiceDataError, match="source"):
        call(home, "select_source", TV, source=["HDMI 1"])


def test_select_sound_mode(home: Home) -> None:
    call(home, "turn_on", SOUNDBAR)
    call(home, "select_sound_mode", SOUNDBAR, sound_mode="Night")
    assert attrs(home, SOUNDBAR)["sound_mode"] == "Night"
    with pytest.raises(ServiceValidationError, match="no sound mode 'Party'"):
        call(home, "select_sound_mode", SOUNDBAR, sound_mode="Party")
    with pytest.raises(ServiceNotSupportedError):
        call(home, "select_sound_mode", TV, sound_mode="Night")


def test_shuffle_and_repeat(home: Home) -> None:
    call(home, "shuffle_set", SPEAKER, shuffle="true")
    call(home, "repeat_set", SPEAKER, repeat="one")
    assert settings(home, SPEAKER)["shuffle"] is True
    assert settings(home, SPEAKER)["repeat"] == "one"
    for bad in ("ALL", "sometimes", True):
        with pytest.raises(InvalidServiceDataError, match="repeat"):
            call(home, "repeat_set", SPEAKER, repeat=bad)
    with pytest.raises(InvalidServiceDataError, match="shuffle"):
        call(home, "shuffle_set", SPEAKER)


# --- play_media ----------------------------------------------------------------------------------


def test_play_media_plays_the_content(home: Home) -> None:
    call(home, "media_play", SPEAKER)
    call(home, "play_media", SPEAKER, media_content_id="radio/bbc6", media_content_type="music")
    assert home.state(SPEAKER).state == "playing"
    assert media(home, SPEAKER) == {
        "media_content_id": "radio/bbc6",
        "media_content_type": "music",
    }
    call(home, "media_next_track", SPEAKER)
    assert media(home, SPEAKER) == MUSIC[1]


def test_play_media_wakes_an_off_tv(home: Home) -> None:
    media_data = {"media_content_id": "netflix:80100172", "media_content_type": "movie"}
    call(home, "play_media", TV, media=media_data)
    assert home.state(TV).state == "playing"
    assert media(home, TV) == media_data


@pytest.mark.parametrize(
    "extra", [{"enqueue": "add"}, {"enqueue": "next"}, {"enqueue": True}, {"announce": True}]
)
def test_play_media_queued_or_announced_leaves_nothing_to_see(
    home: Home, extra: dict[str, Any]
) -> None:
    data = {"media_content_id": "a", "media_content_type": "music", **extra}
    assert call(home, "play_media", SPEAKER, **data).changed == ()


@pytest.mark.parametrize("extra", [{"enqueue": False}, {"enqueue": "replace"}, {"announce": "no"}])
def test_play_media_played_now(home: Home, extra: dict[str, Any]) -> None:
    call(home, "play_media", SPEAKER, media_content_id="a", media_content_type="music", **extra)
    assert attrs(home, SPEAKER)["media_content_id"] == "a"


@pytest.mark.parametrize(
    "data",
    [
        {"media_content_type": "music"},
        {"media_content_id": "a"},
        {"media_content_id": "a", "media_content_type": "music", "enqueue": "later"},
        {"media_content_id": "a", "media_content_type": "music", "enqueue": "add", "announce": 1},
        {"media_content_id": "a", "media_content_type": "music", "extra": "x"},
        {"media": {"media_content_id": "a"}, "media_content_type": "music"},
        {"media": "a", "media_content_id": "a", "media_content_type": "music"},
    ],
)
def test_play_media_rejects_bad_data(home: Home, data: dict[str, Any]) -> None:
    with pytest.raises(InvalidServiceDataError, match=r"media_player\.play_media"):
        call(home, "play_media", SPEAKER, **data)


# --- features and targets ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("service", "data"),
    [
        ("turn_on", {}),
        ("turn_off", {}),
        ("toggle", {}),
        ("media_play", {}),
        ("media_pause", {}),
        ("media_play_pause", {}),
        ("media_stop", {}),
        ("media_next_track", {}),
        ("media_previous_track", {}),
        ("volume_set", {"volume_level": 0.5}),
        ("volume_mute", {"is_volume_muted": True}),
        ("volume_up", {}),
        ("volume_down", {}),
        ("select_source", {"source": "TV"}),
        ("select_sound_mode", {"sound_mode": "Music"}),
        ("shuffle_set", {"shuffle": True}),
        ("repeat_set", {"repeat": "all"}),
        ("play_media", {"media_content_id": "a", "media_content_type": "music"}),
    ],
)
def test_every_service_needs_its_feature(home: Home, service: str, data: dict[str, Any]) -> None:
    with pytest.raises(ServiceNotSupportedError, match=rf"media_player\.{service}"):
        call(home, service, BARE, **data)
    assert home.state(BARE).state == "playing"
    # Through an area, a player without the feature is skipped, as in HA.
    home.call_service("media_player", service, data, {"area_id": "kitchen"})
    assert home.state(BARE).state == "playing"


def test_volume_steps_need_volume_set_or_volume_step(home: Home) -> None:
    home.add_entity(EntityEntry("media_player.amp", "Amp", supported_features=1024), "on")
    call(home, "volume_up", "media_player.amp")
    with pytest.raises(ServiceNotSupportedError):
        call(home, "volume_set", "media_player.amp", volume_level=0.2)


def test_no_data_services_reject_extra_keys(home: Home) -> None:
    with pytest.raises(InvalidServiceDataError, match="extra keys"):
        call(home, "turn_on", TV, volume_level=0.5)


def test_several_players_change_together_or_not_at_all(home: Home) -> None:
    call(home, "turn_on", [TV, SOUNDBAR])
    before = dict(home.states)
    # HDMI 1 is one of the TV's sources but not the soundbar's.
    with pytest.raises(ServiceValidationError, match=SOUNDBAR):
        call(home, "select_source", [TV, SOUNDBAR], source="HDMI 1")
    assert home.states == before
    result = call(home, "volume_set", [TV, SOUNDBAR, SPEAKER], volume_level=0.7)
    assert {state.entity_id for state in result.changed} == {TV, SOUNDBAR, SPEAKER}
    assert all(attrs(home, e)["volume_level"] == 0.7 for e in (TV, SOUNDBAR, SPEAKER))


def test_hidden_changes_do_not_touch_last_updated(home: Home) -> None:
    home.now += 60
    result = call(home, "volume_set", TV, volume_level=0.9)
    assert result.changed == ()
    assert home.state(TV).last_updated == home.state(SPEAKER).last_updated
    assert home.state(TV).hidden["volume_level"] == 0.9


# --- imported players: their own media, none invented ------------------------------------------

# PAUSE | PLAY_MEDIA | NEXT_TRACK | PLAY
IMPORTED_FEATURES = 1 | 512 | 32 | 16384


def imported(state: str, media: dict[str, Any], source: str = "inventory") -> Home:
    """A home of one player, `media_player.den`, holding `media`: from a synthetic-home
    inventory, or from a real Home Assistant's states (a snapshot, as the mirror reads one)."""
    player = {"supported_features": IMPORTED_FEATURES, **media}
    if source == "inventory":
        document: dict[str, Any] = {
            "entities": [{"id": "media_player.den", "state": state, "attributes": player}]
        }
    else:
        document = {
            "states": [{"entity_id": "media_player.den", "state": state, "attributes": player}]
        }
    home, _ = import_ha_snapshot(document)
    return home


def shown_media(home: Home) -> dict[str, Any]:
    """The media attributes media_player.den shows."""
    return {k: v for k, v in home.state("media_player.den").attributes.items() if "media" in k}


@pytest.mark.parametrize(
    "services",
    [["media_play"], ["media_play", "media_pause"], ["media_play", "media_next_track"]],
)
@pytest.mark.parametrize(
    ("state", "media"), [("idle", {}), ("paused", {"media_title": "Song", "media_artist": "X"})]
)
@pytest.mark.parametrize("source", ["inventory", "snapshot"])
def test_an_imported_player_shows_only_its_own_media(
    services: list[str], state: str, media: dict[str, Any], source: str
) -> None:
    """Home Assistant shows what the entity holds: play, pause and skip invent no track."""
    home = imported(state, media, source)
    for service in services:
        home.call_service("media_player", service, target={"entity_id": "media_player.den"})
    assert shown_media(home) == media


def test_play_media_on_an_imported_player_shows_the_content() -> None:
    home = imported("idle", {"media_title": "Song"})
    home.call_service(
        "media_player",
        "play_media",
        target={"entity_id": "media_player.den"},
        data={"media_content_id": "radio/1", "media_content_type": "music"},
    )
    assert home.state("media_player.den").state == "playing"
    assert shown_media(home) == {"media_content_id": "radio/1", "media_content_type": "music"}


def test_a_player_homeflow_exported_keeps_its_playlist() -> None:
    """A HomeFlow snapshot (it carries the rooms) is the twin's own home: its player still steps
    through the built-in playlist, as before the export."""
    home = imported("idle", {}, "snapshot")
    exported = export_ha_snapshot(Home())
    exported["states"] = [
        {
            "entity_id": "media_player.den",
            "state": "idle",
            "attributes": {"supported_features": 16384},
        }
    ]
    again, _ = import_ha_snapshot(exported)
    again.call_service("media_player", "media_play", target={"entity_id": "media_player.den"})
    assert "media_title" in again.state("media_player.den").attributes
    home.call_service("media_player", "media_play", target={"entity_id": "media_player.den"})
    assert shown_media(home) == {}
