"""Packaging facts that must hold in both environments (.venv and Home Assistant's)."""

import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parent.parent


def test_import_pulls_in_nothing_heavy() -> None:
    """twin and agent import inside Home Assistant's Python without torch or homeassistant."""
    heavy = "{'torch', 'transformers', 'trl', 'homeassistant'}"
    code = f"import sys, twin, agent, agent.cli\nprint(sorted({heavy} & set(sys.modules)) or '')"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == ""


def test_versions_agree() -> None:
    """The integration is released with the homeflow version this repository builds, and requires
    nothing Home Assistant would have to install: its release archive carries the package, and a
    requirement that cannot be met offline fails "Add integration" with a bare error."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    manifest = json.loads((ROOT / "custom_components/homeflow/manifest.json").read_text())
    assert manifest["version"] == version
    assert manifest["requirements"] == []


def test_translations_match_strings() -> None:
    """The English translation is the source strings, as Home Assistant's tooling would make it."""
    component = ROOT / "custom_components/homeflow"
    strings = json.loads((component / "strings.json").read_text())
    assert json.loads((component / "translations/en.json").read_text()) == strings


def test_translations_name_every_catalog_entity() -> None:
    """Each named entity of the catalog has its name among the integration's entity translations."""
    from twin.catalog import load_catalog

    strings = json.loads((ROOT / "custom_components/homeflow/strings.json").read_text())
    names = {
        (domain, key): value["name"]
        for domain, keys in strings["entity"].items()
        for key, value in keys.items()
    }
    catalog = {
        (spec.domain, spec.key): spec.name
        for device_type in load_catalog().values()
        for spec in device_type.entities
        if spec.key
    }
    assert names == catalog


def test_readme_layout_names_every_package_folder() -> None:
    """The README's layout table has a row for each folder of twin/ and agent/ that holds code."""
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("## Layout") :].split("\n\n", 2)[1]
    rows = {line.split("`")[1] for line in table.splitlines() if line.startswith("| `")}
    folders = {
        f"{init.parent.relative_to(ROOT).as_posix()}/"
        for package in ("twin", "agent")
        for init in (ROOT / package).rglob("__init__.py")
    }
    assert folders - rows == set()
    assert {row for row in rows if row.endswith("/") and not (ROOT / row).is_dir()} == set()
