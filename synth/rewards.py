"""The reward function shipped for RL trainers, kept under its old import path.

It is `synth.contract.portable.compute_score`: `synth export --format verl` writes that file next
to the data as `synth_contract.py`, which verl loads by path with no synth installed.
"""

from synth.contract.portable import compute_score, extract_answer, ground_truth_answers

__all__ = ["compute_score", "extract_answer", "ground_truth_answers"]
