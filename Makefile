.PHONY: setup test lint

setup:  ## make .venv and the Home Assistant environment (cached; seconds when nothing changed)
	scripts/setup

test:  ## lint, type-check and run every suite; non-zero on any failure
	scripts/test

lint:  ## ruff and mypy only
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy
