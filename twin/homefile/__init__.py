"""Loading and saving homes: the twin's YAML home files, and Home Assistant snapshots.

A home file says what a home is in a few lines: a device names a device type of the catalog
(`twin/device_types/`) and gets that type's entities in their initial state, and only states that
differ from the initial ones are written. `dump_home` then `load_home` gives back an equal home
(registries and states, `hidden` and times included), and `dump_home` writes a home the same way
every time (everything sorted).

```yaml
name: Demo Home
time: "2026-01-01T07:30:00+00:00"  # the simulation clock, ISO 8601 (no offset: UTC)
weather: {city: Berlin, seed: 7}   # twin.weather.Weather; or constant outdoor conditions:
                                   # {temperature: 15.0, humidity: 60.0, sun_elevation: 30.0,
                                   #  cloud_cover: 0.5} (none: ConstantWeather's defaults)
floors:
  - {id: ground, name: Ground Floor, level: 0}
areas:                             # in any order; `parent` nests a room in another
  - {id: bedroom, name: Bedroom, floor: ground}
  - {id: ensuite, name: Ensuite, floor: ground, parent: bedroom}
  - {id: garden, name: Garden, floor: ground, outdoor: true}  # in the weather (default false)
devices:
  - id: bedside_plug
    name: Bedside Plug             # entity ids come from it: switch.bedside_plug
    type: smart_plug               # a device type id of twin.catalog.load_catalog()
    area: bedroom
    manufacturer: Eve              # optional: overrides the type's first model
    model: Energy
  - {id: hub, name: Hub, manufacturer: Acme, model: H1}  # no type: not from the catalog
entities:                          # entities not from the catalog (imported homes)
  - entity_id: sensor.outdoor_temperature
    name: Outdoor Temperature      # the friendly name
    device: hub                    # optional, as are area, device_class,
    device_class: temperature      # unit_of_measurement, supported_features (a bit mask),
    unit_of_measurement: °C        # entity_category and capabilities (static attributes)
    capabilities: {state_class: measurement}
    state: "4.5"                   # required here, with the optional keys of `states`
states:                            # entities whose state differs from their initial one
  switch.bedside_plug:
    state: "on"                    # a string: quote on/off/yes/no and numbers
    attributes: {}                 # merged over the initial attributes
    removed_attributes: []         # initial attributes the state no longer has
    hidden: {}                     # what the device remembers (State.hidden)
    last_changed: "2026-01-01T07:00:00+00:00"  # both default to `time`
    last_updated: "2026-01-01T07:00:00+00:00"
rooms:                             # each area's air (RoomClimate), where it differs from the
  bedroom: {temperature: 19.5, co2: 812.5}  # default; the room physics moves it
```

A device with `type` and `install: false` keeps the type as a label but gets no entities from the
catalog; `dump_home` writes this when a device's entities no longer match its type's. Tuples
(Home Assistant's `hs_color`, `rgb_color`...) are written `!tuple [a, b]` so that they come back as
tuples. Times are kept to the microsecond, Home Assistant's own resolution.

`import_ha_snapshot` twins a real Home Assistant home from a JSON or YAML dump with the keys
`floors` (floor_id, name, level), `areas` (area_id, name, floor_id), `devices` (id, name or
name_by_user, manufacturer, model, area_id), `entities` (entity registry entries) and `states`
(state objects as `/api/states` returns them). Entities of domains the twin does not model (unless
kept, read-only, with `keep_unmodelled`), and registry entries without a state (disabled ones
have none), are skipped and their ids returned.
Capabilities come from the registry entry's `capabilities`, else from the state attributes that
Home Assistant's `capability_attributes` lists; friendly_name, device_class, unit_of_measurement and
supported_features become registry fields. The clock starts at the newest `last_updated`. What Home
Assistant lacks travels as extra keys, which it ignores (`name`, `time`, `weather` and `rooms` at
the top, `parent_id` and `outdoor` on areas, `device_type` on devices, `hidden` on states), so
`export_ha_snapshot` then `import_ha_snapshot` gives back an equal home. JSON turns tuples into
lists; Home Assistant's colour attributes become tuples again, other values stay lists. The twin
has no `hidden_by`.

Without a `states` key the data is read as a `synthetic-home` inventory (`areas`, `devices` and
`entities` with `id`s): floors come from the areas' floor names (all at level 0: the inventory has
no levels), and entity attributes, which are synthetic-home's entity arguments, are made Home
Assistant's (enum names such as `sensor.SensorDeviceClass.TEMPERATURE`, `native_value`, boolean
states, a climate's `hvac_mode`).

All three are read and checked the same way (twin.homefile.common), completely, before a home is
returned: a file or text of at most MAX_FILE_BYTES of UTF-8, lists and mappings nested at most
MAX_DEPTH deep, at most MAX_VALUES values, no YAML aliases (an alias bomb expands a few lines
without end), times within MIN_TIME..MAX_TIME, areas nested at most MAX_AREA_DEPTH deep, and every
entity's registry fields, capabilities, attributes and memory as its domain declares them
(twin.domains.rules). Anything else is a HomeDefinitionError naming where it is (the byte, the line
and column, or the key), and repeating at most a short excerpt of the input.
"""

from .common import (
    MAX_AREA_DEPTH,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_TIME,
    MAX_VALUES,
    MIN_TIME,
    TUPLE_ATTRIBUTES,
    Source,
    with_tuples,
)
from .home_file import dump_home, load_home, save_home
from .snapshot import export_ha_snapshot, import_ha_snapshot

__all__ = [
    "MAX_AREA_DEPTH",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_TIME",
    "MAX_VALUES",
    "MIN_TIME",
    "TUPLE_ATTRIBUTES",
    "Source",
    "dump_home",
    "export_ha_snapshot",
    "import_ha_snapshot",
    "load_home",
    "save_home",
    "with_tuples",
]
