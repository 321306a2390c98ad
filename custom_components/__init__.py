"""Home Assistant custom integrations shipped by HomeFlow."""
