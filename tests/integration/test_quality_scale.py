"""The integration's quality-scale record names every rule Home Assistant has, and the README's
checklist is that record; what the record calls done for icons and parallel updates holds."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import homeassistant.components
import yaml
from homeassistant.core import HomeAssistant
from homeassistant.helpers.icon import async_get_icons
from homeassistant.setup import async_setup_component

from custom_components.homeflow.const import DOMAIN, HELPER_DOMAINS, PLATFORMS

INTEGRATION = Path(__file__).parents[2] / "custom_components" / DOMAIN
README = Path(__file__).parents[2] / "README.md"
STATUSES = ("done", "exempt", "todo")


def core_rules() -> set[str]:
    """Every rule named in the installed core integrations' quality_scale.yaml files: hassfest
    makes each file name them all, so their union is the scale itself."""
    files = Path(homeassistant.components.__file__).parent.glob("*/quality_scale.yaml")
    return {rule for file in files for rule in yaml.safe_load(file.read_text())["rules"]}


def our_rules() -> dict[str, tuple[str, str, str | None]]:
    """Rule -> (tier, status, comment), the tier from the file's "# Bronze"-style headings."""
    text = (INTEGRATION / "quality_scale.yaml").read_text()
    rules = yaml.safe_load(text)["rules"]
    tiers: dict[str, str] = {}
    tier = ""
    for line in text.splitlines():
        if heading := re.fullmatch(r"  # (\w+)", line):
            tier = heading[1]
        elif rule := re.fullmatch(r"  ([a-z-]+):.*", line):
            tiers[rule[1]] = tier
    return {
        name: (tiers[name], value, None)
        if isinstance(value, str)
        else (tiers[name], value["status"], value.get("comment"))
        for name, value in rules.items()
    }


def checklist() -> str:
    """The README's table: per tier, the rules by status."""
    rules = our_rules()
    rows = ["| tier | done | exempt | todo |", "|---|---|---|---|"]
    for tier in dict.fromkeys(tier for tier, _, _ in rules.values()):
        cells = [
            ", ".join(f"`{n}`" for n, (t, s, _) in rules.items() if t == tier and s == status)
            for status in STATUSES
        ]
        rows.append(f"| {tier} | {' | '.join(cells)} |")
    return "\n".join(rows)


def test_every_rule_is_recorded_with_a_status() -> None:
    rules = our_rules()
    assert set(rules) == core_rules()
    assert {tier for tier, _, _ in rules.values()} == {"Bronze", "Silver", "Gold", "Platinum"}
    for name, (_, status, comment) in rules.items():
        assert status in STATUSES, name
        assert status == "done" or comment, f"{name} is {status} without a reason"


def test_the_readme_checklist_is_the_record() -> None:
    assert checklist() in README.read_text()


async def test_every_action_has_an_icon(hass: HomeAssistant) -> None:
    assert await async_setup_component(hass, DOMAIN, {})
    icons = await async_get_icons(hass, "services", [DOMAIN])
    actions = yaml.safe_load((INTEGRATION / "services.yaml").read_text())
    assert set(icons[DOMAIN]) == set(actions)
    assert all(icon["service"].startswith("mdi:") for icon in icons[DOMAIN].values())


def test_every_platform_says_how_many_updates_run_at_once() -> None:
    for platform in [*PLATFORMS, *HELPER_DOMAINS, "conversation"]:
        module = importlib.import_module(f"custom_components.{DOMAIN}.{platform}")
        assert module.PARALLEL_UPDATES == 0, platform
