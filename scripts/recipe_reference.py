"""Write docs/reference/recipe-keys.md from the recipes' configs (tests/test_docs.py checks it is current).

python scripts/recipe_reference.py
"""

from pathlib import Path

from synth.pipelines.recipe_params import reference_page

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "recipe-keys.md"

if __name__ == "__main__":
    PAGE.write_text(reference_page())
    print(f"wrote {PAGE}")
