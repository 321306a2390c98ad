"""TVs, soundbars, speakers and streaming boxes of a virtual home."""

from __future__ import annotations

from typing import Any, override

from homeassistant.components.media_player import (
    MediaPlayerEntity,
    MediaPlayerEntityFeature,
    MediaPlayerState,
    MediaType,
    RepeatMode,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from twin.domains import media_player as twin_media_player
from twin.registry import EntityEntry

from . import HomeFlowConfigEntry
from .entity import HomeFlowEntity
from .virtual_home import VirtualHome

_STATES = {state.value: state for state in MediaPlayerState}

# Actions change the in-process twin: no I/O, so no limit on how many run at once.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: HomeFlowConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Add the home's media players."""
    virtual = entry.runtime_data
    async_add_entities(HomeFlowMediaPlayer(virtual, e) for e in virtual.entities_of("media_player"))


def _media(key: str) -> Any:
    """A property that reads what is playing from the twin, which shows it only while it plays."""
    return property(lambda self: self.attribute.get(key), doc=f"The twin's {key}.")


class HomeFlowMediaPlayer(HomeFlowEntity, MediaPlayerEntity):
    """A twin media player: each action goes to the twin's service of that name.

    Home Assistant shows none of a player's state attributes while it is off; the twin then keeps
    its settings in `hidden`, and the player reads them from there, so that Home Assistant code
    that asks an off player for its volume or source gets what the player remembers.

    volume_up and volume_down go to the twin's own, not through Home Assistant's (volume_set, one
    volume_step away): the twin does the same arithmetic, but keeps HA's int at the bounds (1, 0),
    which its volume_set would store as a float. The tests check both give the same level.
    """

    def __init__(self, virtual: VirtualHome, entry: EntityEntry) -> None:
        """Mirror a twin media player, with its features."""
        super().__init__(virtual, entry)
        self._attr_supported_features = MediaPlayerEntityFeature(entry.supported_features)

    def _setting(self, key: str) -> Any:
        """One of the player's settings: shown while it is on, remembered while it is off."""
        twin = self.twin
        return (twin.hidden if twin.state == twin_media_player.OFF else twin.attributes).get(key)

    @property
    @override
    def state(self) -> MediaPlayerState | None:
        """The twin's state; None (unknown) if it is not a media player state."""
        return _STATES.get(self.twin.state)

    @property
    @override
    def volume_level(self) -> float | None:
        """The volume, 0-1."""
        return self._setting(twin_media_player.ATTR_VOLUME_LEVEL)

    @property
    @override
    def is_volume_muted(self) -> bool | None:
        """Whether the player is muted."""
        return self._setting(twin_media_player.ATTR_VOLUME_MUTED)

    @property
    @override
    def source(self) -> str | None:
        """The input or app the player shows."""
        return self._setting(twin_media_player.ATTR_SOURCE)

    @property
    @override
    def sound_mode(self) -> str | None:
        """The sound mode."""
        return self._setting(twin_media_player.ATTR_SOUND_MODE)

    @property
    @override
    def shuffle(self) -> bool | None:
        """Whether the player shuffles."""
        return self._setting(twin_media_player.ATTR_SHUFFLE)

    @property
    @override
    def repeat(self) -> RepeatMode | str | None:
        """off, all or one."""
        return self._setting(twin_media_player.ATTR_REPEAT)

    @property
    @override
    def source_list(self) -> list[str] | None:
        """The inputs and apps the player offers."""
        return self.attribute.get(twin_media_player.ATTR_SOURCE_LIST)

    @property
    @override
    def sound_mode_list(self) -> list[str] | None:
        """The sound modes the player offers."""
        return self.attribute.get(twin_media_player.ATTR_SOUND_MODE_LIST)

    media_content_id = _media("media_content_id")
    media_content_type = _media("media_content_type")
    media_duration = _media("media_duration")
    media_position = _media("media_position")
    media_position_updated_at = _media("media_position_updated_at")
    media_title = _media("media_title")
    media_artist = _media("media_artist")
    media_album_name = _media("media_album_name")
    media_album_artist = _media("media_album_artist")
    media_track = _media("media_track")
    media_series_title = _media("media_series_title")
    media_season = _media("media_season")
    media_episode = _media("media_episode")
    media_channel = _media("media_channel")
    media_playlist = _media("media_playlist")
    app_id = _media("app_id")
    app_name = _media("app_name")

    @override
    async def async_turn_on(self) -> None:
        """Wake the player."""
        self.call("turn_on")

    @override
    async def async_turn_off(self) -> None:
        """Switch the player off."""
        self.call("turn_off")

    @override
    async def async_toggle(self) -> None:
        """On if off or in standby, else off."""
        self.call("toggle")

    @override
    async def async_media_play(self) -> None:
        """Play."""
        self.call("media_play")

    @override
    async def async_media_pause(self) -> None:
        """Pause."""
        self.call("media_pause")

    @override
    async def async_media_play_pause(self) -> None:
        """Pause if playing, else play."""
        self.call("media_play_pause")

    @override
    async def async_media_stop(self) -> None:
        """Stop playback."""
        self.call("media_stop")

    @override
    async def async_media_next_track(self) -> None:
        """Skip to the next track or episode."""
        self.call("media_next_track")

    @override
    async def async_media_previous_track(self) -> None:
        """Go back to the previous track or episode."""
        self.call("media_previous_track")

    @override
    async def async_set_volume_level(self, volume: float) -> None:
        """Set the volume, 0-1."""
        self.call("volume_set", volume_level=volume)

    @override
    async def async_volume_up(self) -> None:
        """One volume step up, at most 1."""
        self.call("volume_up")

    @override
    async def async_volume_down(self) -> None:
        """One volume step down, at least 0."""
        self.call("volume_down")

    @override
    async def async_mute_volume(self, mute: bool) -> None:
        """Mute or unmute."""
        self.call("volume_mute", is_volume_muted=mute)

    @override
    async def async_select_source(self, source: str) -> None:
        """Switch input or app; the twin refuses one the player does not have."""
        self.call("select_source", source=source)

    @override
    async def async_select_sound_mode(self, sound_mode: str) -> None:
        """Switch sound mode; the twin refuses one the player does not have."""
        self.call("select_sound_mode", sound_mode=sound_mode)

    @override
    async def async_set_shuffle(self, shuffle: bool) -> None:
        """Turn shuffle on or off."""
        self.call("shuffle_set", shuffle=shuffle)

    @override
    async def async_set_repeat(self, repeat: RepeatMode) -> None:
        """Set repeat; the twin keeps it as a plain string, as it saves homes as YAML."""
        self.call("repeat_set", repeat=str(repeat))

    @override
    async def async_play_media(
        self, media_type: MediaType | str, media_id: str, **kwargs: Any
    ) -> None:
        """Play content now, or queue or announce it (kwargs: enqueue, announce, extra)."""
        if (enqueue := kwargs.get("enqueue")) is not None:
            kwargs["enqueue"] = str(enqueue)
        self.call(
            "play_media", media_content_type=str(media_type), media_content_id=media_id, **kwargs
        )
