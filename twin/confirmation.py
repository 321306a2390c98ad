"""The user's confirmation of sensitive actions, one conversation at a time.

With a policy that names sensitive actions (twin.auditor.CONFIRMING_POLICY: unlocking, opening a
garage door or a gate), the auditor refuses such a call with `confirmation_required` and notes
the action, on each entity it reaches, as pending in the conversation's `Confirmation`. The agent
asks the user. The user's next message confirms what is pending when it is a yes, for the agent's
turn that answers it: the same call then goes through. A no, or any other message, drops it.

The confirmation comes only from what the user says (`Confirmation.hear`, called with each user
message by whoever runs the conversation), never from the agent: no tool argument confirms
anything, and a yes confirms only what the auditor asked about before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# A sensitive action on one entity: ("lock.unlock", "lock.front_door").
Action = tuple[str, str]

# Words that say yes or no in the languages Home Assistant's users speak most (en, de, fr, es,
# nl, it, pl, pt); Home Assistant's own language data (home-assistant-intents) has none.
YES_WORDS = frozenset(
    {
        *("yes", "yeah", "yep", "yup", "sure", "ok", "okay", "confirm", "confirmed"),
        *("ja", "jawohl", "genau", "klar", "bestätigt", "gerne"),
        *("oui", "ouais", "d'accord", "volontiers"),
        *("sí", "si", "vale", "claro"),
        *("jazeker", "oké"),
        *("sì", "certo", "confermo"),
        *("tak", "dobrze", "potwierdzam"),
        *("sim", "confirmo"),
    }
)
NO_WORDS = frozenset(
    {
        *("no", "nope", "don't", "cancel", "stop"),
        *("nein", "nicht", "abbrechen"),
        *("non", "annule", "annuler"),
        *("cancela", "cancelar"),
        *("nee", "niet", "annuleer"),
        *("annulla",),
        *("nie", "anuluj"),
        *("não", "nao"),
    }
)
_WORDS = re.compile(r"[\w']+")
# How the auditor names the actions it needs confirmed, in its message (`request`).
_ACTION = re.compile(r"\b([a-z_]+\.[a-z0-9_]+) on ([a-z_]+\.[a-z0-9_]+)")


def answer(utterance: str) -> bool | None:
    """True for a yes, False for a no, None for neither: the first yes or no word decides
    ("No, just the kitchen one" is a no; "Yes, no problem" a yes)."""
    for word in _WORDS.findall(utterance.lower().replace("\N{RIGHT SINGLE QUOTATION MARK}", "'")):
        if word in YES_WORDS:
            return True
        if word in NO_WORDS:
            return False
    return None


def request(actions: Iterable[Action]) -> str:
    """The auditor's message for actions that need the user's confirmation: it tells the agent
    what to do, and names each action so that `asked` reads it back."""
    named = ", ".join(f"{action} on {entity_id}" for action, entity_id in sorted(actions))
    return (
        f"{named} needs the user's confirmation: ask the user whether to do it, and make the "
        "same call again once they say yes"
    )


def asked(message: str) -> frozenset[Action]:
    """The actions a `confirmation_required` message (`request`'s) asks the user to confirm."""
    return frozenset(_ACTION.findall(message))


@dataclass(slots=True)
class Confirmation:
    """One conversation's sensitive actions: those the auditor asked the user about (`pending`,
    until the user's next message) and those the user's last message confirmed (`confirmed`,
    until the one after)."""

    pending: frozenset[Action] = frozenset()
    confirmed: frozenset[Action] = frozenset()

    def ask(self, actions: Iterable[Action]) -> None:
        """Note actions the auditor refused until the user confirms them."""
        self.pending |= frozenset(actions)

    def hear(self, utterance: str) -> None:
        """Take the user's message: a yes confirms what is pending; anything else drops it."""
        self.confirmed = self.pending if answer(utterance) is True else frozenset()
        self.pending = frozenset()
