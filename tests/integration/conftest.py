"""Fixtures for the integration's tests under Home Assistant's test harness."""

import pytest

# Imported before Home Assistant starts, so that HA resolves `custom_components` to this repository.
import custom_components  # noqa: F401


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Let Home Assistant load the integration from custom_components/."""
