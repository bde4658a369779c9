"""The README and the manual under docs/ say what the code does: every `synth` command in their bash
blocks parses with the CLI (command, options, choices) and its `--param` keys validate against the
recipe's config; every YAML block parses, and a flows file (`flows:` or `models:`) validates; the
generated reference page is current; the site builds with no warning (`mkdocs build --strict`)."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from synth.cli.main import cli
from synth.config import apply_params, build_config
from synth.errors import ConfigError
from synth.pipelines.recipe_params import reference_page
from synth.pipelines.recipes import RECIPES
from synth.run.flows_file import load_flows

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(language: str) -> list[tuple[str, str]]:
    return [
        (str(page.relative_to(ROOT)), body)
        for page in PAGES
        for lang, body in FENCE.findall(page.read_text())
        if lang == language
    ]


def commands() -> list[tuple[str, list[str]]]:
    """(page, argv after `synth`) for every synth command in a bash block."""
    found = []
    for page, body in blocks("bash"):
        for line in body.replace("\\\n", " ").splitlines():
            for segment in re.split(r"&&|\|\||;|\|", line):
                try:
                    words = shlex.split(segment, comments=True)
                except ValueError:
                    continue
                while words and re.match(r"^[A-Z_]+=", words[0]):  # VAR=value synth ...
                    words = words[1:]
                if words[:1] == ["synth"]:
                    found.append((page, [word for word in words[1:] if not word.startswith((">", "&"))]))
    return found


def _params(argv: list[str]) -> list[str]:
    return [argv[index + 1] for index, word in enumerate(argv[:-1]) if word == "--param"]


def _check_recipe_params(argv: list[str]) -> None:
    """`--param` keys of a generate or curate command validate against the recipe's config."""
    if argv[0] == "generate" and "--recipe" in argv:
        recipe = argv[argv.index("--recipe") + 1]
    elif argv[0] == "curate":
        recipe = "curate"
    else:
        return
    if recipe not in RECIPES:
        return  # a recipe of the user's own (package.module:Class)
    build_config(
        RECIPES[recipe].load().Config,
        apply_params({"source": "x"} if recipe == "curate" else {}, _params(argv)),
        recipe,
    )


COMMANDS = commands()


def test_the_pages_show_commands():
    assert len(COMMANDS) > 60  # the tour and the manual


@pytest.mark.parametrize("page, argv", COMMANDS, ids=[f"{page}:{' '.join(argv)[:60]}" for page, argv in COMMANDS])
def test_every_documented_command_parses(page, argv):
    command, args, names = cli, list(argv), ["synth"]
    while isinstance(command, click.Group) and args and not args[0].startswith("-"):
        name = args.pop(0)
        assert name in command.commands, f"{page}: `synth {' '.join(argv)}`: no command {name!r}"
        command, names = command.commands[name], [*names, name]
    try:
        command.make_context(" ".join(names), args)
    except click.exceptions.Exit:
        pass  # --help
    except click.UsageError as error:
        pytest.fail(f"{page}: `synth {' '.join(argv)}`: {error.format_message()}")
    try:
        _check_recipe_params(argv)
    except ConfigError as error:
        pytest.fail(f"{page}: `synth {' '.join(argv)}`: {error}")


YAML_BLOCKS = blocks("yaml")


@pytest.mark.parametrize("page, body", YAML_BLOCKS, ids=[page for page, _ in YAML_BLOCKS])
def test_every_documented_yaml_block_parses_and_a_flows_file_validates(page, body, tmp_path):
    values = yaml.safe_load(body)
    assert isinstance(values, dict), page
    if {"flows", "models"} & set(values):
        path = tmp_path / "flows.yaml"
        path.write_text(body)
        load_flows(path)


def test_the_recipe_reference_page_is_current():
    page = ROOT / "docs" / "reference" / "recipe-keys.md"
    assert page.read_text() == reference_page(), "run `python scripts/recipe_reference.py` and commit the page"


def test_the_site_builds_with_no_warning(tmp_path):
    mkdocs = str(Path(sys.executable).parent / "mkdocs")  # the test extra installs it beside this Python
    result = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "WARNING" not in result.stderr, result.stderr[-3000:]


def test_the_contributing_file_map_is_current():
    sys.path.insert(0, str(ROOT / "scripts"))
    import file_map

    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    assert file_map.with_map(contributing) == contributing, "run `python scripts/file_map.py --write`"


def test_the_readme_stays_an_entry_point():
    """The README says what synth is, sets it up and tours it; the manual is under docs/."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 350


def test_the_audit_page_shows_the_rubric_the_sheets_and_the_judge_use():
    from synth.audit.rubric import RUBRIC

    assert RUBRIC in (ROOT / "docs" / "audit.md").read_text(), "docs/audit.md must show synth.audit.rubric.RUBRIC"
