import numpy as np
import pytest

from synth.contract.matching import match_answer, normalize_answer, token_f1
from synth.contract.portable import compute_score, extract_answer


def test_normalization_drops_case_punctuation_articles_and_accents():
    assert normalize_answer("  The Zoë-Ann  Band!") == "zoeann band"


def test_match_kinds():
    assert match_answer("paris", ["Paris", "City of Light"]) == ("exact", 1.0)
    assert match_answer("the city of light", ["Paris", "City of Light"]) == ("alias", 1.0)
    kind, f1 = match_answer("Paris France", ["Paris"], f1_threshold=0.6)
    assert kind == "f1" and f1 == pytest.approx(2 / 3)
    assert match_answer("London", ["Paris"])[0] == "none"
    assert match_answer(None, ["Paris"]) == ("none", 0.0)
    assert token_f1("", "Paris") == 0.0


def test_reward_reads_the_last_answer_tag():
    assert extract_answer("<answer>x</answer> then <answer> Paris </answer>") == "Paris"
    assert extract_answer("no tag") is None
    truth = {"target": np.array(["Paris", "City of Light"])}  # verl hands numpy arrays over from Parquet
    assert compute_score("synth_multihop", "<think>..</think><answer>city of light</answer>", truth) == 1.0
    assert compute_score("synth_multihop", "<answer>London</answer>", truth) == 0.0
    assert compute_score("synth_multihop", "<answer>London</answer>", truth, format_score=0.1) == 0.1
    assert compute_score("synth_multihop", "Paris", truth, format_score=0.1) == 0.0
    assert compute_score("x", "<answer>Paris</answer>", ["Paris"]) == 1.0
    assert compute_score("x", "<answer>Paris</answer>", "Paris") == 1.0


def test_the_reward_file_works_alone_in_a_python_without_synth(tmp_path):
    """The verl export copies synth/contract/portable.py as synth_contract.py; verl loads it by path."""
    import shutil
    import subprocess
    import sys

    import synth.contract.portable

    shutil.copy(synth.contract.portable.__file__, tmp_path / "synth_contract.py")
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('r', {str(tmp_path / 'synth_contract.py')!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        "print(module.compute_score('d', '<answer>Paris</answer>', {'target': ['paris']}))\n"
    )
    # -S and -I: no site-packages, so synth itself is not importable in the child.
    output = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, check=True)
    assert output.stdout.strip() == "1.0"
