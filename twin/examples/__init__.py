"""Example home files, shipped as package data so that `importlib.resources` finds them."""
