"""The HomeFlow twin: a fast, pure-Python model of a home that speaks Home Assistant natively.

It imports nothing from Home Assistant and nothing heavy, so that it stays fast (it is the inner
loop of RL) and importable inside Home Assistant's own Python.
"""
