"""The HomeFlow agent: one tool surface over the twin and Home Assistant, policies, the data
flywheel, training and SmartHome-Bench.

Heavy libraries (torch, transformers, TRL) are imported only by the modules that train or run a
local model, never on import of this package.
"""
