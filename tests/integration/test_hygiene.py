"""A home's setup, reload and removal use no deprecated Home Assistant API and raise no repairs."""

from __future__ import annotations

import logging
import warnings

import pytest
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from .conftest import every_device_home, set_up_home


async def test_setup_reload_and_removal_are_clean(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    """Home Assistant reports a deprecated call from an integration (frame.report_usage) as a
    log line naming it, and Python's deprecations as warnings: neither may name HomeFlow."""
    caplog.set_level(logging.WARNING)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        entry = await set_up_home(hass, every_device_home())
        assert await hass.config_entries.async_reload(entry.entry_id)
        await hass.async_block_till_done()
        assert await hass.config_entries.async_remove(entry.entry_id)
        await hass.async_block_till_done()
    ours = [
        record.getMessage()
        for record in caplog.records
        if record.levelno >= logging.WARNING
        and record.name != "homeassistant.loader"  # "a custom integration ... not been tested"
        and ("homeflow" in record.name or "homeflow" in record.getMessage())
    ]
    assert ours == []
    assert [str(w.message) for w in caught if "homeflow" in w.filename] == []
    assert [
        issue.issue_id
        for issue in ir.async_get(hass).issues.values()
        if "homeflow" in (issue.domain, issue.issue_domain)
    ] == []
