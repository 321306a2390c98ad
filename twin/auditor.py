"""The action auditor: turns forbidden, sensitive or impossible actions into deterministic feedback.

An `ActionPolicy` says which Home Assistant actions an agent may take. `ActionPolicy.check` judges
a proposed call against a home *before* it runs and returns a `Verdict`: allowed, or a feedback
code, a message that says how to fix the call, and a penalty for RL. `ActionPolicy.verdict_for` maps
the code of an error raised *after* execution (a `TwinError`, or a pyexec sandbox code) to the same
kind of verdict.

The auditor judges the call as the home resolves it (`Home.resolve`, once): refused by name first,
then by the action each entity it reaches would receive, before the home plans the rest of it
(so a forbidden or sensitive action is refused as such even when its data are also wrong).

Penalty table (`PENALTIES`; a policy may carry its own):

| code                 | penalty | when                                                           |
|----------------------|---------|----------------------------------------------------------------|
| forbidden_domain     | -1.0    | the domain is not allowed (shell_command, hassio, script...)   |
| forbidden_service    | -1.0    | the domain is allowed but this action is not                   |
| restricted_code      | -1.0    | pyexec: the code uses a forbidden construct (import, `__x`)    |
| step_limit           | -0.5    | pyexec: the code ran too many loop iterations or calls         |
| time_limit           | -0.5    | pyexec: the code ran too long                                  |
| memory_limit         | -0.5    | pyexec: the code built something too large                     |
| unknown_entity       | -0.3    | an entity id names nothing in the home                         |
| unknown_target       | -0.3    | an area, floor, device or label id names nothing in the home   |
| unknown_service      | -0.3    | the domain has no such action                                  |
| unsupported_feature  | -0.2    | the entity lacks the feature, or is of another domain          |
| invalid_data         | -0.2    | the data fails the action's schema, or the device refuses it   |
| syntax_error         | -0.2    | pyexec: the code does not parse                                |
| code_error           | -0.2    | pyexec: the code raised an ordinary Python error               |
| invalid_action       | -0.2    | any other error                                                |
| confirmation_required | 0.0   | a sensitive action the user has not confirmed yet              |

Forbidden actions cost most: they are never right. Impossible ones are honest mistakes an agent
learns from by reading the home more carefully. A confirmation request costs nothing: it is how
the agent learns it must ask (twin.confirmation), and the only way to a sensitive action.

By default a policy has no sensitive actions: the agent may unlock a door it is given, as Home
Assistant lets any agent act on an exposed entity. `CONFIRMING_POLICY` asks the user first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .confirmation import Confirmation, request
from .domains import DEVICE_DOMAINS, domain_of
from .errors import TwinError
from .home import CROSS_DOMAIN, CROSS_DOMAIN_SERVICES, Home, ResolvedCall, ServiceResult

CROSS_DOMAIN_ACTIONS = frozenset(f"{CROSS_DOMAIN}.{service}" for service in CROSS_DOMAIN_SERVICES)
# Scripts do whatever their author wrote, which the auditor cannot judge: a policy runs them only
# when it says so (`scripts`), as Home Assistant's Assist runs only the scripts a user exposes.
SCRIPT = "script"

# What no policy may allow: they run code, restart or stop the server, or destroy history.
NEVER_ALLOWED_DOMAINS = frozenset(
    {
        "shell_command",
        "python_script",
        "pyscript",
        "automation",
        "hassio",
        "recorder",
        "rest_command",
        "system_log",
        "logger",
        "backup",
        "update",
    }
)
NEVER_ALLOWED_SERVICES = frozenset(
    {
        "homeassistant.restart",
        "homeassistant.stop",
        "homeassistant.reload_all",
        "homeassistant.reload_core_config",
        "homeassistant.reload_config_entry",
        "homeassistant.set_location",
        "homeassistant.save_persistent_states",
    }
)

PENALTIES: Mapping[str, float] = MappingProxyType(
    {
        "forbidden_domain": -1.0,
        "forbidden_service": -1.0,
        "restricted_code": -1.0,
        "step_limit": -0.5,
        "time_limit": -0.5,
        "memory_limit": -0.5,
        "unknown_entity": -0.3,
        "unknown_target": -0.3,
        "unknown_service": -0.3,
        "unsupported_feature": -0.2,
        "invalid_data": -0.2,
        "syntax_error": -0.2,
        "code_error": -0.2,
        "invalid_action": -0.2,
        "confirmation_required": 0.0,
    }
)

# The feedback code for each TwinError code.
FEEDBACK_CODES: Mapping[str, str] = MappingProxyType(
    {
        "entity_not_found": "unknown_entity",
        "target_not_found": "unknown_target",
        "service_not_found": "unknown_service",
        "service_not_supported": "unsupported_feature",
        "invalid_data": "invalid_data",
        "validation_error": "invalid_data",
    }
)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The auditor's judgement of one action: allowed, or why not and what it costs."""

    allowed: bool
    code: str = "ok"
    message: str = ""
    penalty: float = 0.0


ALLOWED = Verdict(True)


@dataclass(frozen=True, slots=True)
class SensitiveAction:
    """An action that needs the user's confirmation; on entities of `device_class` only, if set."""

    service: str
    device_class: str | None = None


# What CONFIRMING_POLICY asks the user to confirm: opening the home to whoever is outside.
SENSITIVE_ACTIONS = frozenset(
    {
        SensitiveAction("lock.unlock"),
        SensitiveAction("lock.open"),
        *(
            SensitiveAction(f"cover.{service}", device_class)
            for service in ("open_cover", "toggle", "set_cover_position")
            for device_class in ("garage", "gate")
        ),
    }
)


class ActionDeniedError(TwinError):
    """The auditor refused an action; `code` is the verdict's feedback code."""

    def __init__(self, verdict: Verdict) -> None:
        super().__init__(verdict.message)
        self.code = verdict.code
        self.verdict = verdict


@dataclass(frozen=True, slots=True)
class ActionPolicy:
    """Which actions an agent may take.

    Every action of `domains` is allowed, plus the single actions in `services` ("domain.service"),
    except those in `denied`. Actions matching `sensitive` need the user's confirmation, kept in
    the conversation's `confirmation` (twin.confirmation); a policy has none unless given. Scripts
    are opaque actions, allowed only by `scripts=True` (all their actions, except those denied):
    Home Assistant's Assist exposes no script until the user exposes it, so by default none runs.
    """

    domains: frozenset[str] = DEVICE_DOMAINS
    services: frozenset[str] = CROSS_DOMAIN_ACTIONS
    denied: frozenset[str] = frozenset()
    scripts: bool = False
    sensitive: frozenset[SensitiveAction] = frozenset()
    penalties: Mapping[str, float] = field(default_factory=lambda: PENALTIES, hash=False)

    def __post_init__(self) -> None:
        never = self.domains & NEVER_ALLOWED_DOMAINS
        never |= {name for name in self.services if _is_never_allowed(name)}
        if never:
            raise ValueError(f"A policy may never allow {', '.join(sorted(never))}")
        if SCRIPT in self.domains or any(
            name.partition(".")[0] == SCRIPT for name in self.services
        ):
            raise ValueError("A policy allows scripts with scripts=True, not by name")
        if missing := set(PENALTIES) - set(self.penalties):
            raise ValueError(f"penalties lacks codes: {', '.join(sorted(missing))}")

    def check(
        self,
        home: Home,
        domain: str,
        service: str,
        data: Mapping[str, Any] | None = None,
        target: Mapping[str, Any] | None = None,
        confirmation: Confirmation | None = None,
    ) -> Verdict:
        """Judge a call before it runs: policy, sensitivity, then a dry run on a copy of `home`."""
        try:
            call = self._admit(home, domain, service, data, target, confirmation)
            home.copy().apply(home.plan(call))
        except TwinError as err:
            return self._verdict(err)
        return ALLOWED

    def screen(
        self,
        home: Home,
        domain: str,
        service: str,
        data: Mapping[str, Any] | None = None,
        target: Mapping[str, Any] | None = None,
        confirmation: Confirmation | None = None,
    ) -> Verdict:
        """Judge a call by policy and sensitivity only, leaving its validity to the home.

        For `homeassistant.*` actions each targeted entity is judged by the action it receives
        (`homeassistant.toggle` on a garage door is `cover.toggle`).
        """
        try:
            self._admit(home, domain, service, data, target, confirmation)
        except TwinError as err:
            return self._verdict(err)
        return ALLOWED

    def enforce(
        self,
        home: Home,
        domain: str,
        service: str,
        data: Mapping[str, Any] | None = None,
        target: Mapping[str, Any] | None = None,
        confirmation: Confirmation | None = None,
    ) -> ResolvedCall:
        """The call resolved, for the home to plan and apply; ActionDeniedError unless `screen`
        allows it (for executors: pyexec)."""
        try:
            return self._admit(home, domain, service, data, target, confirmation)
        except TwinError as err:
            raise ActionDeniedError(self._verdict(err)) from None

    def call(
        self,
        home: Home,
        domain: str,
        service: str,
        data: Mapping[str, Any] | None = None,
        target: Mapping[str, Any] | None = None,
        confirmation: Confirmation | None = None,
    ) -> ServiceResult:
        """Make the call if the policy allows it, resolving its target once (for tools): raises
        ActionDeniedError when the policy refuses it, else the home's TwinError if it fails."""
        call = self._admit(home, domain, service, data, target, confirmation)
        return home.apply(home.plan(call))

    def verdict_for(self, code: str, message: str) -> Verdict:
        """The verdict for an error code: a TwinError code, a feedback code or a pyexec code."""
        feedback = FEEDBACK_CODES.get(code, code)
        if feedback not in self.penalties:
            feedback = "invalid_action"
        return self._deny(feedback, message)

    def _deny(self, code: str, message: str) -> Verdict:
        return Verdict(False, code, message, self.penalties[code])

    def _verdict(self, err: TwinError) -> Verdict:
        return (
            err.verdict
            if isinstance(err, ActionDeniedError)
            else self.verdict_for(err.code, str(err))
        )

    def _admit(
        self,
        home: Home,
        domain: str,
        service: str,
        data: Mapping[str, Any] | None,
        target: Mapping[str, Any] | None,
        confirmation: Confirmation | None = None,
    ) -> ResolvedCall:
        """The call resolved, if the policy allows it: ActionDeniedError when it refuses the call,
        by name or by an entity the call reaches; the home's TwinError when the target is bad.
        Sensitive actions the `confirmation` has not confirmed are noted in it as pending and
        refused together, once nothing else refuses the call."""
        if code := self._refusal(domain, service):
            raise ActionDeniedError(self._deny(code, self._refusal_message(code, domain, service)))
        if not isinstance(data or {}, Mapping) or not isinstance(target or {}, Mapping):
            raise ActionDeniedError(self._deny("invalid_data", "data and target must be dicts"))
        call = home.resolve(domain, service, data, target)
        confirmed = confirmation.confirmed if confirmation is not None else frozenset()
        unconfirmed: list[tuple[str, str]] = []
        for entity_id in call.selection.entity_ids(home):
            entity_domain = entity_id.partition(".")[0]
            action = f"{entity_domain}.{service}"
            if domain == CROSS_DOMAIN:
                if service not in domain_of(entity_domain).services:
                    continue
                if code := self._refusal(entity_domain, service):
                    reason = self._refusal_message(code, entity_domain, service)
                    raise ActionDeniedError(
                        self._deny(
                            code, f"{domain}.{service} runs {action} on {entity_id}: {reason}"
                        )
                    )
            elif entity_domain != domain:
                continue
            if self._is_sensitive(home, action, entity_id) and (action, entity_id) not in confirmed:
                unconfirmed.append((action, entity_id))
        if unconfirmed:
            if confirmation is not None:
                confirmation.ask(unconfirmed)
            raise ActionDeniedError(self._deny("confirmation_required", request(unconfirmed)))
        return call

    def _refusal(self, domain: str, service: str) -> str | None:
        """The feedback code that forbids `domain.service`, or None when the policy allows it."""
        name = f"{domain}.{service}"
        if name in self.denied or name in NEVER_ALLOWED_SERVICES:
            return "forbidden_service"
        if domain == SCRIPT:
            return None if self.scripts else "forbidden_domain"
        if domain in self.domains or name in self.services:
            return None
        if any(allowed.partition(".")[0] == domain for allowed in self.services):
            return "forbidden_service"
        return "forbidden_domain"

    def _refusal_message(self, code: str, domain: str, service: str) -> str:
        if code == "forbidden_domain":
            allowed = ", ".join(
                sorted({*self.domains, *(s.partition(".")[0] for s in self.services)})
            )
            return f"Domain {domain} is not allowed; allowed domains: {allowed}"
        offered = sorted(s for s in self.services if s.partition(".")[0] == domain)
        hint = f"; allowed here: {', '.join(offered)}" if offered else ""
        return f"Action {domain}.{service} is not allowed{hint}"

    def _is_sensitive(self, home: Home, action: str, entity_id: str) -> bool:
        device_class = home.entities[entity_id].device_class
        return any(
            rule.service == action and rule.device_class in (None, device_class)
            for rule in self.sensitive
        )


def _is_never_allowed(name: str) -> bool:
    return name in NEVER_ALLOWED_SERVICES or name.partition(".")[0] in NEVER_ALLOWED_DOMAINS


DEFAULT_POLICY = ActionPolicy()
CONFIRMING_POLICY = ActionPolicy(sensitive=SENSITIVE_ACTIONS)
