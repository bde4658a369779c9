"""The agent contract: one declaration of tools, observations and finishing, read by every stage.

`contracts.py` declares the named contracts; `portable.py` is the run-time part (observation
rendering, answer extraction, matching, the reward) that the verl export copies next to the data;
`render.py` shows a stored trajectory under a contract; `observations.py` reads results back.
"""

from synth.contract.contracts import CONTRACTS, DEFAULT, AgentContract, get_contract

__all__ = ["CONTRACTS", "DEFAULT", "AgentContract", "get_contract"]
