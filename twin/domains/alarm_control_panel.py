"""alarm_control_panel: security alarm panels that arm, disarm and sound (AlarmControlPanelEntity).

Schemas, feature flags, states and the code rule are Home Assistant's: every service takes an
optional `code` (coerced to a string); an empty code is none. Arming without a code a panel that
says `code_arm_required` is a ServiceValidationError (check_code_arm_required); disarming and
triggering never need one. `code_format` (`number` or `text`, or none) only tells a user interface
which keypad to show: like Home Assistant, the twin does not check a code against it, and whether
a code is right is the panel's business; the panels the twin models accept any code. Arming,
disarming and triggering complete within the call (the twin has no exit delay yet), so `arming`,
`pending` and `disarming` only come from a home's initial state.
"""

from __future__ import annotations

from typing import Any

import voluptuous as vol

from ..errors import ServiceValidationError
from ..service import EntityDraft, Handler, Service, schema
from ..validation import string
from .descriptor import Carrying, Domain
from .rules import EntityRules, flag, one_of, optional, text

# AlarmControlPanelEntityFeature.
ARM_HOME = 1
ARM_AWAY = 2
ARM_NIGHT = 4
TRIGGER = 8
ARM_CUSTOM_BYPASS = 16
ARM_VACATION = 32

# AlarmControlPanelState.
DISARMED = "disarmed"
ARMED_HOME = "armed_home"
ARMED_AWAY = "armed_away"
ARMED_NIGHT = "armed_night"
ARMED_VACATION = "armed_vacation"
ARMED_CUSTOM_BYPASS = "armed_custom_bypass"
PENDING = "pending"
ARMING = "arming"
DISARMING = "disarming"
TRIGGERED = "triggered"
STATES = frozenset(
    (
        DISARMED,
        ARMED_HOME,
        ARMED_AWAY,
        ARMED_NIGHT,
        ARMED_VACATION,
        ARMED_CUSTOM_BYPASS,
        PENDING,
        ARMING,
        DISARMING,
        TRIGGERED,
    )
)

ATTR_CODE = "code"
ATTR_CODE_FORMAT = "code_format"
ATTR_CODE_ARM_REQUIRED = "code_arm_required"
ATTR_CHANGED_BY = "changed_by"
# What a synthetic-home inventory names the state (the entity's `_attr_alarm_state`).
ATTR_ALARM_STATE = "alarm_state"
CODE_FORMATS = ("number", "text")  # CodeFormat

_CODE_SCHEMA = schema({vol.Optional(ATTR_CODE): string})


def _arm(state: str) -> Handler:
    """The handler that arms a panel into `state`, refusing a missing code where one is needed."""

    def arm(entity: EntityDraft, data: dict[str, Any]) -> None:
        if not data.get(ATTR_CODE) and entity.attributes.get(ATTR_CODE_ARM_REQUIRED, True):
            raise ServiceValidationError(
                f"Arming requires a code but none was given for {entity.entity_id}."
            )
        entity.state = state

    arm.__doc__ = f"Arm the panel: {state}."
    return arm


def disarm(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Disarm (and silence a triggered alarm)."""
    entity.state = DISARMED


def trigger(entity: EntityDraft, data: dict[str, Any]) -> None:
    """Sound the alarm."""
    entity.state = TRIGGERED


# What a panel may hold (twin.domains.rules).
RULES = EntityRules(
    {
        ATTR_CODE_FORMAT: optional(one_of(CODE_FORMATS)),
        ATTR_CODE_ARM_REQUIRED: flag,
        ATTR_CHANGED_BY: optional(text),
    },
    states=STATES,
)


def show(entity: EntityDraft) -> None:
    """Show what AlarmControlPanelEntity.state_attributes always writes, with its defaults."""
    for key, value in ((ATTR_CODE_FORMAT, None), (ATTR_CHANGED_BY, None)):
        entity.attributes.setdefault(key, value)
    entity.attributes.setdefault(ATTR_CODE_ARM_REQUIRED, True)


DOMAIN = Domain.of(
    "alarm_control_panel",
    [
        Service("alarm_disarm", disarm, _CODE_SCHEMA, description="Disarms an alarm."),
        Service(
            "alarm_arm_home",
            _arm(ARMED_HOME),
            _CODE_SCHEMA,
            (ARM_HOME,),
            "Arms an alarm in home mode.",
        ),
        Service(
            "alarm_arm_away",
            _arm(ARMED_AWAY),
            _CODE_SCHEMA,
            (ARM_AWAY,),
            "Arms an alarm in away mode.",
        ),
        Service(
            "alarm_arm_night",
            _arm(ARMED_NIGHT),
            _CODE_SCHEMA,
            (ARM_NIGHT,),
            "Arms an alarm in night mode.",
        ),
        Service(
            "alarm_arm_vacation",
            _arm(ARMED_VACATION),
            _CODE_SCHEMA,
            (ARM_VACATION,),
            "Arms an alarm in vacation mode.",
        ),
        Service(
            "alarm_arm_custom_bypass",
            _arm(ARMED_CUSTOM_BYPASS),
            _CODE_SCHEMA,
            (ARM_CUSTOM_BYPASS,),
            "Arms an alarm while allowing to bypass a custom area.",
        ),
        Service("alarm_trigger", trigger, _CODE_SCHEMA, (TRIGGER,), "Triggers an alarm."),
    ],
    {
        "arm_home": ARM_HOME,
        "arm_away": ARM_AWAY,
        "arm_night": ARM_NIGHT,
        "trigger": TRIGGER,
        "arm_custom_bypass": ARM_CUSTOM_BYPASS,
        "arm_vacation": ARM_VACATION,
    },
    rules=RULES,
    device=True,
    key_attributes=(ATTR_CODE_FORMAT,),
    state_outcomes={
        "alarm_disarm": '== "disarmed"',
        "alarm_arm_home": '== "armed_home"',
        "alarm_arm_away": '== "armed_away"',
        "alarm_arm_night": '== "armed_night"',
        "alarm_arm_vacation": '== "armed_vacation"',
        "alarm_arm_custom_bypass": '== "armed_custom_bypass"',
        "alarm_trigger": '== "triggered"',
    },
    carrying=Carrying(
        state_attribute=ATTR_ALARM_STATE,
        enums=frozenset({ATTR_ALARM_STATE, ATTR_CODE_FORMAT}),
        shows=show,
    ),
    color="#c1121f",
)
