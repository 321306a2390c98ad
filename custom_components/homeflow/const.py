"""Constants for the HomeFlow integration."""

DOMAIN = "homeflow"
DEFAULT_NAME = "HomeFlow home"
