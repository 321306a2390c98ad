"""Typed errors for bad input to the twin, mirroring Home Assistant's service errors.

Every error carries a stable `code` (for the auditor's feedback and RL penalties) and a message that
says what was wrong and how to fix it. An error always means that nothing changed.
"""


class TwinError(Exception):
    """Base of every error the twin raises for bad input."""

    code = "error"


class EntityNotFoundError(TwinError):
    """An entity id names no entity of the home."""

    code = "entity_not_found"


class TargetNotFoundError(TwinError):
    """An area, floor or device id names nothing in the home."""

    code = "target_not_found"


class ServiceNotFoundError(TwinError):
    """The domain offers no such service (Home Assistant's ServiceNotFound)."""

    code = "service_not_found"


class ServiceNotSupportedError(TwinError):
    """The entity lacks the feature the service needs (Home Assistant's ServiceNotSupported)."""

    code = "service_not_supported"


class InvalidServiceDataError(TwinError):
    """The service data fails the service's schema (Home Assistant's vol.Invalid)."""

    code = "invalid_data"


class ServiceValidationError(TwinError):
    """The entity refuses valid-looking data (Home Assistant's ServiceValidationError)."""

    code = "validation_error"


class EntityRefusedError(TwinError):
    """The entity refused the call with Home Assistant's plain HomeAssistantError (an option an
    input_select lacks), not a ServiceValidationError."""

    code = "error"


class InvalidEntityStateError(TwinError):
    """A call reached an entity whose state its domain cannot hold (one set outside the checked
    importers, e.g. a light's `color_mode` written as a list): the home must be fixed first."""

    code = "invalid_state"


class HomeDefinitionError(TwinError):
    """A home, device type or catalog definition is malformed."""

    code = "invalid_home"


class ConditionError(TwinError):
    """A goal condition is malformed, or cannot be evaluated against the home."""

    code = "invalid_condition"
