"""media_player: TVs, speakers, soundbars and streaming boxes (Home Assistant's MediaPlayerEntity).

Schemas, required features, toggle, media_play_pause and volume_up/down are Home Assistant's own.
What HA leaves to the integration follows its demo player where that is sane (play wakes a player
that is off; volume, source and modes set while off are remembered) and a well-behaved device
where the demo is not (stop goes to the resting state, not off; pause only pauses what plays).

As in HA, an off player shows none of its state attributes: its volume, source, sound mode,
shuffle and repeat wait in `hidden` until it is on again. Media attributes show only while
something plays, is paused or buffers; they come from a small built-in playlist per device (as the
demo's), whose position is kept in `hidden`, or from the last `play_media`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..registry import EntityEntry
from ..service import EntityDraft, Service, schema
from ..state import State
from ..validation import boolean, shown, small_float, string
from .descriptor import ON_OFF_SPOKEN, Asked, Carrying, Domain, FieldNotes, Spoken
from .rules import EntityRules, flag, index, names, number, one_of, optional, sequence, text

OFF = "off"
ON = "on"
IDLE = "idle"
PLAYING = "playing"
PAUSED = "paused"
STANDBY = "standby"
BUFFERING = "buffering"
SHOWS_MEDIA = frozenset((PLAYING, PAUSED, BUFFERING))
# Players of these device classes rest in "on" (a TV showing its home screen), others in "idle".
RESTS_ON = frozenset(("tv", "projector"))

# MediaPlayerEntityFeature, for the services the twin models.
PAUSE = 1
VOLUME_SET = 4
VOLUME_MUTE = 8
PREVIOUS_TRACK = 16
NEXT_TRACK = 32
TURN_ON = 128
TURN_OFF = 256
PLAY_MEDIA = 512
VOLUME_STEP = 1024
SELECT_SOURCE = 2048
STOP = 4096
PLAY = 16384
SHUFFLE_SET = 32768
SELECT_SOUND_MODE = 65536
REPEAT_SET = 262144

FEATURES = {
    "pause": PAUSE,
    "volume_set": VOLUME_SET,
    "volume_mute": VOLUME_MUTE,
    "previous_track": PREVIOUS_TRACK,
    "next_track": NEXT_TRACK,
    "turn_on": TURN_ON,
    "turn_off": TURN_OFF,
    "play_media": PLAY_MEDIA,
    "volume_step": VOLUME_STEP,
    "select_source": SELECT_SOURCE,
    "stop": STOP,
    "play": PLAY,
    "shuffle_set": SHUFFLE_SET,
    "select_sound_mode": SELECT_SOUND_MODE,
    "repeat_set": REPEAT_SET,
}

ATTR_VOLUME_LEVEL = "volume_level"
ATTR_VOLUME_MUTED = "is_volume_muted"
ATTR_SOURCE = "source"
ATTR_SOURCE_LIST = "source_list"
ATTR_SOUND_MODE = "sound_mode"
ATTR_SOUND_MODE_LIST = "sound_mode_list"
ATTR_SHUFFLE = "shuffle"
ATTR_REPEAT = "repeat"
ATTR_CONTENT_ID = "media_content_id"
ATTR_CONTENT_TYPE = "media_content_type"
ATTR_ENQUEUE = "enqueue"
ATTR_ANNOUNCE = "announce"
ATTR_EXTRA = "extra"
ATTR_MEDIA = "media"

# The player's settings: shown while it is on, remembered in `hidden` while it is off.
SETTINGS = (
    ATTR_VOLUME_LEVEL,
    ATTR_VOLUME_MUTED,
    ATTR_SOURCE,
    ATTR_SOUND_MODE,
    ATTR_SHUFFLE,
    ATTR_REPEAT,
)
# Every other state attribute of HA's MediaPlayerEntity: what is playing.
MEDIA_ATTRIBUTES = (
    ATTR_CONTENT_ID,
    ATTR_CONTENT_TYPE,
    "media_duration",
    "media_position",
    "media_position_updated_at",
    "media_title",
    "media_artist",
    "media_album_name",
    "media_album_artist",
    "media_track",
    "media_series_title",
    "media_season",
    "media_episode",
    "media_channel",
    "media_playlist",
    "app_id",
    "app_name",
)
HIDDEN_TRACK = "track"
HIDDEN_MEDIA = "media"
# An imported player's own media attributes: it has no built-in playlist to invent a track from.
HIDDEN_HELD = "held"

REPEAT_MODES = ("off", "all", "one")
ENQUEUE_MODES = ("add", "next", "play", "replace")
DEFAULT_VOLUME = 0.25
# MediaPlayerEntity.volume_step's default, used by volume_up and volume_down.
VOLUME_STEP_SIZE = 0.1

MUSIC = tuple(
    {
        ATTR_CONTENT_ID: f"homeflow://music/{number}",
        ATTR_CONTENT_TYPE: "music",
        "media_duration": duration,
        "media_title": title,
        "media_artist": artist,
        "media_album_name": album,
        "media_track": number,
    }
    for number, (artist, title, album, duration) in enumerate(
        (
            ("Claude Debussy", "Clair de lune", "Suite bergamasque", 302),
            ("Erik Satie", "Gymnopédie No. 1", "Gymnopédies", 214),
            ("Antonio Vivaldi", "Spring: Allegro", "The Four Seasons", 208),
            ("Johann Pachelbel", "Canon in D", "Canon and Gigue", 339),
            ("Ludwig van Beethoven", "Für Elise", "Bagatelles", 175),
        ),
        start=1,
    )
)
EPISODES = tuple(
    {
        ATTR_CONTENT_ID: f"homeflow://tv/quiet-coast/1/{episode}",
        ATTR_CONTENT_TYPE: "tvshow",
        "media_duration": 2940,
        "media_title": f"Chapter {episode}",
        "media_series_title": "The Quiet Coast",
        "media_season": "1",
        "media_episode": str(episode),
    }
    for episode in range(1, 7)
)


def _resting_state(entity: EntityDraft) -> str:
    """The state a player is in when it is on and plays nothing."""
    return ON if entity.entry.device_class in RESTS_ON else IDLE


def _playlist(entity: EntityDraft) -> tuple[dict[str, Any], ...]:
    """The built-in playlist: episodes for screens, music for everything else."""
    return EPISODES if entity.entry.device_class in RESTS_ON else MUSIC


def _settings(entity: EntityDraft) -> dict[str, Any]:
    """Where the player's settings live now: hidden while it is off, shown otherwise."""
    return entity.hidden if entity.state == OFF else entity.attributes


def _defaults(entity: EntityDraft) -> Iterator[tuple[str, Any]]:
    """The settings a player reports the first time it is on, by its features."""
    if entity.supports(VOLUME_SET):
        yield ATTR_VOLUME_LEVEL, DEFAULT_VOLUME
    if entity.supports(VOLUME_MUTE):
        yield ATTR_VOLUME_MUTED, False
    if entity.supports(SELECT_SOURCE) and (sources := entity.capabilities.get(ATTR_SOURCE_LIST)):
        yield ATTR_SOURCE, sources[0]
    if entity.supports(SELECT_SOUND_MODE) and (
        modes := entity.capabilities.get(ATTR_SOUND_MODE_LIST)
    ):
        yield ATTR_SOUND_MODE, modes[0]
    if entity.supports(SHUFFLE_SET):
        yield ATTR_SHUFFLE, False
    if entity.supports(REPEAT_SET):
        yield ATTR_REPEAT, "off"


def _set_state(entity: EntityDraft, state: str) -> None:
    """Change state, hiding or showing the settings when the player goes off or comes on."""
    attributes, hidden = entity.attributes, entity.hidden
    if state == OFF and entity.state != OFF:
        for key in SETTINGS:
            if key in attributes:
                hidden[key] = attributes.pop(key)
    elif state != OFF and entity.state == OFF:
        for key in SETTINGS:
            if key in hidden:
                attributes[key] = hidden.pop(key)
        for key, value in _defaults(entity):
            attributes.setdefault(key, value)
    entity.state = state
    _show_media(entity)


def _show_media(entity: EntityDraft) -> None:
    """Show what is playing while something plays, is paused or buffers; nothing otherwise."""
    attributes = entity.attributes
    for key in MEDIA_ATTRIBUTES:
        attributes.pop(key, None)
    held = entity.hidden.get(HIDDEN_HELD)
    if held is not None:
        if entity.state != OFF:  # MediaPlayerEntity.state_attributes: nothing while off
            attributes.update(held)
        return
    if entity.state not in SHOWS_MEDIA:
        return
    custom = entity.hidden.get(HIDDEN_MEDIA)
    if custom is not None:
        attributes[ATTR_CONTENT_ID], attributes[ATTR_CONTENT_TYPE] = custom
    else:
        attributes.update(_playlist(entity)[entity.hidden.get(HIDDEN_TRACK, 0)])


def hold(entity: EntityDraft) -> None:
    """Keep an imported player's media as its own: calls show it as Home Assistant shows an
    entity's, and play, pause or skip invent no track it never had."""
    attributes = entity.attributes
    entity.hidden[HIDDEN_HELD] = {
        key: attributes[key] for key in MEDIA_ATTRIBUTES if key in attributes
    }


def turn_on(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Wake an off or standby player into its resting state; a player that is on stays as is."""
    if entity.state in (OFF, STANDBY):
        _set_state(entity, _resting_state(entity))


def turn_off(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Switch off; HA then hides the player's attributes."""
    _set_state(entity, OFF)


def toggle(entity: EntityDraft, data: dict[str, Any]) -> None:
    """On if off or standby, else off (MediaPlayerEntity.async_toggle)."""
    if entity.state in (OFF, STANDBY):
        turn_on(entity, data)
    else:
        turn_off(entity, data)


def media_play(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Play the current item; a player that is off wakes to play, as HA's demo player does."""
    _set_state(entity, PLAYING)


def media_pause(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Pause what is playing; anything else stays as it is."""
    if entity.state in (PLAYING, BUFFERING):
        _set_state(entity, PAUSED)


def media_play_pause(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Pause if playing, else play (MediaPlayerEntity.async_media_play_pause)."""
    if entity.state == PLAYING:
        media_pause(entity, data)
    else:
        media_play(entity, data)


def media_stop(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Stop playback: the player stays on, in its resting state, keeping its place."""
    if entity.state in SHOWS_MEDIA:
        _set_state(entity, _resting_state(entity))


def _skip(entity: EntityDraft, step: int) -> None:
    """Move through the playlist; its ends stop the move unless repeat is `all`, which wraps."""
    if entity.state == OFF or HIDDEN_HELD in entity.hidden:
        return
    size = len(_playlist(entity))
    track = entity.hidden.get(HIDDEN_TRACK, 0) + step
    if not 0 <= track < size:
        if entity.attributes.get(ATTR_REPEAT) != "all":
            return
        track %= size
    entity.hidden[HIDDEN_TRACK] = track
    entity.hidden.pop(HIDDEN_MEDIA, None)
    _show_media(entity)


def media_next_track(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Skip to the next item of the playlist."""
    _skip(entity, 1)


def media_previous_track(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Go back to the previous item of the playlist."""
    _skip(entity, -1)


def volume_set(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the volume, 0..1."""
    _settings(entity)[ATTR_VOLUME_LEVEL] = data[ATTR_VOLUME_LEVEL]


def volume_mute(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Mute or unmute; the volume level is kept."""
    _settings(entity)[ATTR_VOLUME_MUTED] = data[ATTR_VOLUME_MUTED]


def volume_up(entity: EntityDraft, data: dict[str, Any]) -> None:
    """One step up, at most 1, when the volume is known and settable (async_volume_up)."""
    settings = _settings(entity)
    level = settings.get(ATTR_VOLUME_LEVEL)
    if level is not None and level < 1 and entity.supports(VOLUME_SET):
        settings[ATTR_VOLUME_LEVEL] = min(1, level + VOLUME_STEP_SIZE)


def volume_down(entity: EntityDraft, data: dict[str, Any]) -> None:
    """One step down, at least 0, when the volume is known and settable (async_volume_down)."""
    settings = _settings(entity)
    level = settings.get(ATTR_VOLUME_LEVEL)
    if level is not None and level > 0 and entity.supports(VOLUME_SET):
        settings[ATTR_VOLUME_LEVEL] = max(0, level - VOLUME_STEP_SIZE)


def _choose(entity: EntityDraft, value: str, options_key: str, what: str) -> str:
    """`value` if it is one of the entity's options (devices such as Onkyo's reject others)."""
    options = entity.capabilities.get(options_key) or ()
    if value not in options:
        choices = ", ".join(options) or "none"
        raise ServiceValidationError(
            f"{entity.entity_id} has no {what} {value!r}; choose one of: {choices}"
        )
    return value


def select_source(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Switch to one of the player's sources (its source_list)."""
    source = _choose(entity, data[ATTR_SOURCE], ATTR_SOURCE_LIST, "source")
    _settings(entity)[ATTR_SOURCE] = source


def select_sound_mode(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Switch to one of the player's sound modes (its sound_mode_list)."""
    mode = _choose(entity, data[ATTR_SOUND_MODE], ATTR_SOUND_MODE_LIST, "sound mode")
    _settings(entity)[ATTR_SOUND_MODE] = mode


def shuffle_set(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Turn shuffle on or off."""
    _settings(entity)[ATTR_SHUFFLE] = data[ATTR_SHUFFLE]


def repeat_set(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Set the repeat mode: off, all or one."""
    _settings(entity)[ATTR_REPEAT] = data[ATTR_REPEAT]


def play_media(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Play the given content now. Queued items and announcements leave nothing to see: the
    twin keeps no queue, and an announcement ends with the player back where it was."""
    if data.get(ATTR_ANNOUNCE) or data.get(ATTR_ENQUEUE) in ("add", "next"):
        return
    media = (data[ATTR_CONTENT_ID], data[ATTR_CONTENT_TYPE])
    if HIDDEN_HELD in entity.hidden:
        entity.hidden[HIDDEN_HELD] = dict(
            zip((ATTR_CONTENT_ID, ATTR_CONTENT_TYPE), media, strict=True)
        )
    else:
        entity.hidden[HIDDEN_MEDIA] = media
    _set_state(entity, PLAYING)


def _promote_media_fields(data: dict[str, Any]) -> dict[str, Any]:
    """Accept content id and type inside a `media` mapping, as HA's play_media does."""
    media = data.get(ATTR_MEDIA)
    if not isinstance(media, dict):
        return data
    if ATTR_CONTENT_TYPE in data or ATTR_CONTENT_ID in data:
        raise vol.Invalid(
            f"Play media cannot contain '{ATTR_MEDIA}' and "
            f"'{ATTR_CONTENT_ID}' or '{ATTR_CONTENT_TYPE}'"
        )
    promoted = {key: value for key, value in data.items() if key != ATTR_MEDIA}
    for key in (ATTR_CONTENT_TYPE, ATTR_CONTENT_ID):
        if key in media:
            promoted[key] = media[key]
    return promoted


def _rewrite_enqueue(data: dict[str, Any]) -> dict[str, Any]:
    """The deprecated boolean enqueue: true means `add`, false means `play` (as in HA)."""
    enqueue = data.get(ATTR_ENQUEUE)
    if enqueue is True:
        data[ATTR_ENQUEUE] = "add"
    elif enqueue is False:
        data[ATTR_ENQUEUE] = "play"
    return data


PLAY_MEDIA_SCHEMA = vol.All(
    _promote_media_fields,
    schema(
        {
            vol.Required(ATTR_CONTENT_TYPE): string,
            vol.Required(ATTR_CONTENT_ID): string,
            vol.Exclusive(ATTR_ENQUEUE, "enqueue_announce"): vol.Any(
                boolean, vol.In(ENQUEUE_MODES)
            ),
            vol.Exclusive(ATTR_ANNOUNCE, "enqueue_announce"): boolean,
            vol.Optional(ATTR_EXTRA, default=dict): dict,
        }
    ),
    _rewrite_enqueue,
)


# --- what a media player may hold (twin.domains.rules) --------------------------------------------

# MediaPlayerEntityFeature's bits the twin offers no service for: SEEK, CLEAR_PLAYLIST,
# BROWSE_MEDIA, GROUPING, MEDIA_ANNOUNCE, MEDIA_ENQUEUE and SEARCH_MEDIA.
UNMODELLED_FEATURES = 2 | 8192 | 131072 | 524288 | 1048576 | 2097152 | 4194304


def _held(value: Any) -> Any:
    """An imported player's own media: a mapping of media attributes."""
    if not isinstance(value, dict) or not set(value) <= set(MEDIA_ATTRIBUTES):
        raise vol.Invalid(f"expected a mapping of media attributes, got {shown(value)}")
    return value


def from_arguments(arguments: dict[str, Any]) -> str | None:
    """MediaPlayerEntity writes only what a player knows: an argument that is None shows
    nothing. The state is the `state` argument (Carrying.state_attribute)."""
    for key in [key for key, value in arguments.items() if value is None]:
        del arguments[key]
    return None


def _consistent(entry: EntityEntry, state: State) -> None:
    """Its place in the built-in playlist within the playlist (`_show_media` shows that item)."""
    track = state.hidden.get(HIDDEN_TRACK)
    size = len(_playlist(EntityDraft.of(entry, state)))
    if track is not None and track >= size:
        raise vol.Invalid(
            f"hidden.{HIDDEN_TRACK}: {track} is past the built-in playlist of this player "
            f"(0-{size - 1})"
        )


RULES = EntityRules(
    {
        ATTR_SOURCE_LIST: optional(names()),
        ATTR_SOUND_MODE_LIST: optional(names()),
        ATTR_VOLUME_LEVEL: optional(number(0, 1)),
        ATTR_VOLUME_MUTED: optional(flag),
        ATTR_SOURCE: optional(text),
        ATTR_SOUND_MODE: optional(text),
        ATTR_SHUFFLE: optional(flag),
        ATTR_REPEAT: optional(one_of(REPEAT_MODES)),
        HIDDEN_TRACK: index,
        HIDDEN_MEDIA: optional(sequence(text, text)),
        HIDDEN_HELD: _held,
    },
    _consistent,
    UNMODELLED_FEATURES,
    states=frozenset((OFF, ON, IDLE, PLAYING, PAUSED, STANDBY, BUFFERING)),
)


DOMAIN = Domain.of(
    "media_player",
    [
        Service("turn_on", turn_on, required_features=(TURN_ON,), description="Turn on."),
        Service("turn_off", turn_off, required_features=(TURN_OFF,), description="Turn off."),
        Service(
            "toggle",
            toggle,
            required_features=(TURN_ON | TURN_OFF,),
            description="Turn on if off or in standby, else off.",
        ),
        Service("media_play", media_play, required_features=(PLAY,), description="Start playing."),
        Service(
            "media_pause", media_pause, required_features=(PAUSE,), description="Pause playback."
        ),
        Service(
            "media_play_pause",
            media_play_pause,
            required_features=(PLAY | PAUSE,),
            description="Pause if playing, else play.",
        ),
        Service("media_stop", media_stop, required_features=(STOP,), description="Stop playback."),
        Service(
            "media_next_track",
            media_next_track,
            required_features=(NEXT_TRACK,),
            description="Skip to the next track or episode.",
        ),
        Service(
            "media_previous_track",
            media_previous_track,
            required_features=(PREVIOUS_TRACK,),
            description="Go back to the previous track or episode.",
        ),
        Service(
            "volume_set",
            volume_set,
            schema({vol.Required(ATTR_VOLUME_LEVEL): small_float}),
            (VOLUME_SET,),
            "Set the volume level, 0 to 1.",
        ),
        Service(
            "volume_mute",
            volume_mute,
            schema({vol.Required(ATTR_VOLUME_MUTED): boolean}),
            (VOLUME_MUTE,),
            "Mute or unmute.",
        ),
        Service(
            "volume_up",
            volume_up,
            required_features=(VOLUME_SET, VOLUME_STEP),
            description="Turn the volume up by 0.1.",
        ),
        Service(
            "volume_down",
            volume_down,
            required_features=(VOLUME_SET, VOLUME_STEP),
            description="Turn the volume down by 0.1.",
        ),
        Service(
            "select_source",
            select_source,
            schema({vol.Required(ATTR_SOURCE): string}),
            (SELECT_SOURCE,),
            "Switch to one of the source_list inputs or apps.",
        ),
        Service(
            "select_sound_mode",
            select_sound_mode,
            schema({vol.Required(ATTR_SOUND_MODE): string}),
            (SELECT_SOUND_MODE,),
            "Switch to one of the sound_mode_list modes.",
        ),
        Service(
            "shuffle_set",
            shuffle_set,
            schema({vol.Required(ATTR_SHUFFLE): boolean}),
            (SHUFFLE_SET,),
            "Turn shuffle on or off.",
        ),
        Service(
            "repeat_set",
            repeat_set,
            schema({vol.Required(ATTR_REPEAT): vol.In(REPEAT_MODES)}),
            (REPEAT_SET,),
            "Set repeat to off, all or one.",
        ),
        Service(
            "play_media",
            play_media,
            PLAY_MEDIA_SCHEMA,
            (PLAY_MEDIA,),
            "Play media_content_id of type media_content_type.",
        ),
    ],
    FEATURES,
    rules=RULES,
    device=True,
    key_attributes=(ATTR_VOLUME_LEVEL, ATTR_SOURCE),
    fields={
        ATTR_SOURCE: FieldNotes(options_from=ATTR_SOURCE_LIST),
        ATTR_SOUND_MODE: FieldNotes(options_from=ATTR_SOUND_MODE_LIST),
    },
    state_outcomes={
        "turn_on": 'not in ("off", "standby")',
        "turn_off": '== "off"',
        "media_play": '== "playing"',
        "play_media": '== "playing"',
        "media_pause": '== "paused"',
        "media_stop": 'not in ("playing", "paused", "buffering")',
    },
    relative_outcomes={"volume_up": (ATTR_VOLUME_LEVEL, 1), "volume_down": (ATTR_VOLUME_LEVEL, -1)},
    carrying=Carrying(
        capabilities=frozenset({ATTR_SOURCE_LIST, ATTR_SOUND_MODE_LIST}),
        arguments=from_arguments,
        state_attribute="state",
        holds=hold,
    ),
    spoken={
        **ON_OFF_SPOKEN,
        "media_pause": (Spoken("HassMediaPause"),),
        "media_play": (Spoken("HassMediaUnpause"),),
        "media_next_track": (Spoken("HassMediaNext"),),
        "media_previous_track": (Spoken("HassMediaPrevious"),),
        "volume_set": (
            Spoken("HassSetVolume", {"volume_level": "volume_level"}, {"volume_level": 100}),
        ),
    },
    asked=Asked(feature_requests=(("volume_set", {"volume_level": 0.3}),)),
    color="#9d4edd",
)
