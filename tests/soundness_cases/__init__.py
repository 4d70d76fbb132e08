"""Copies of the functions and flows of the shared soundness repros (issue 16), one module
per repro: `build(empty=False)` makes the flow, `reset()` the state its functions share.
"""
