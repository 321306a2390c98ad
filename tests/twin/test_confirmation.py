"""The user's yes and no, and a conversation's confirmation of sensitive actions."""

from __future__ import annotations

import pytest

from twin.confirmation import Confirmation, answer, asked, request

DOOR = ("lock.unlock", "lock.front_door")
GATE = ("cover.open_cover", "cover.gate")


@pytest.mark.parametrize(
    ("utterance", "meant"),
    [
        ("Yes, please.", True),
        ("yeah go ahead", True),
        ("OK", True),
        ("Ja, bitte", True),
        ("Oui, vas-y", True),
        ("D\N{RIGHT SINGLE QUOTATION MARK}accord", True),
        ("Sí, claro", True),
        ("Ja hoor", True),
        ("Sì, grazie", True),
        ("Tak, proszę", True),
        ("Sim, por favor", True),
        ("Yes, no problem", True),  # the first word decides
        ("No, just the kitchen one.", False),
        ("Don't.", False),
        ("Nein, danke", False),
        ("Non merci", False),
        ("Nee, laat maar", False),
        ("Nie", False),
        ("Não", False),
        ("Whatever you think is best.", None),
        ("Turn on the light", None),
        ("", None),
    ],
)
def test_answer_reads_a_yes_or_a_no_in_the_users_language(utterance: str, meant: bool) -> None:
    assert answer(utterance) is meant


def test_the_request_names_what_it_asks_for_and_reads_back() -> None:
    message = request([GATE, DOOR])
    assert message.startswith("cover.open_cover on cover.gate, lock.unlock on lock.front_door")
    assert "ask the user" in message
    assert asked(message) == {DOOR, GATE}
    assert asked(f"ActionDeniedError: {message} (line 2)") == {DOOR, GATE}  # as pyexec says it


def test_a_yes_confirms_what_was_asked_until_the_user_speaks_again() -> None:
    confirmation = Confirmation()
    confirmation.hear("yes")  # nothing asked yet
    assert confirmation == Confirmation()
    confirmation.ask([DOOR])
    confirmation.ask([GATE])
    confirmation.hear("Yes, please")
    assert (confirmation.pending, confirmation.confirmed) == (frozenset(), {DOOR, GATE})
    confirmation.hear("yes")  # a second yes confirms nothing new: the first one lapses
    assert confirmation == Confirmation()


@pytest.mark.parametrize("utterance", ["no", "Actually, turn on the light", "hmm"])
def test_anything_but_a_yes_drops_what_was_asked(utterance: str) -> None:
    confirmation = Confirmation()
    confirmation.ask([DOOR])
    confirmation.hear(utterance)
    assert confirmation == Confirmation()
