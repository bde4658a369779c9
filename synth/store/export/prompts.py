"""Prompts of the Search-R1 formats, and user prompt templates (`--prompt-template`).

Search-R1's trainer scores exact match on the prompt and the response decoded together, and reads
an answer only when it finds at least two `<answer>...</answer>` there, taking the last: so its
prompt must hold exactly one example tag. With none, every rollout scores 0; with two or more, a
rollout that never answers is scored against the prompt's last example. (Search-R1's own prompt
has two; ours has one.) verl-format prompts come from the agent contract (`synth.contract`).
"""

from pathlib import Path
from typing import overload

from synth.contract.portable import ANSWER_TAG
from synth.errors import ConfigError

SEARCH_R1_PROMPT = (
    "Answer the question below. Reason inside <think> and </think> whenever you get new information. "
    "When you are missing knowledge, write a query as <search> query </search>; the search results "
    "will come back between <information> and </information>. You may search as often as you need. "
    "When nothing more is needed, write only the final answer in answer tags, for example "
    "<answer> Paris </answer>. Question: {question}\n"
)


@overload
def load_template(path: Path | None, default: str) -> str: ...


@overload
def load_template(path: Path | None, default: None) -> str | None: ...


def load_template(path: Path | None, default: str | None) -> str | None:
    """A user's template file (must contain {question}), or the default."""
    if path is None:
        return default
    try:
        template = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read --prompt-template {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"--prompt-template {path} is not UTF-8 text; save it as UTF-8") from None
    if "{question}" not in template:
        raise ConfigError(f"--prompt-template {path} has no {{question}} placeholder; add one where the question goes")
    return template


def render(template: str, question: str) -> str:
    return template.replace("{question}", question)


def search_r1_answer_tag_warning(template: str) -> str | None:
    """What goes wrong with Search-R1's scorer on prompts of `template`, or None."""
    examples = len(ANSWER_TAG.findall(render(template, "")))
    if examples == 0:
        return (
            "warning: the prompt template has no <answer>...</answer> example; Search-R1's qa_em reads an answer only "
            "when the prompt holds one, so every rollout would score 0: add one, e.g. 'for example <answer> Paris "
            "</answer>'"
        )
    if examples > 1:
        return (
            f"warning: the prompt template holds {examples} <answer>...</answer> matches; Search-R1's qa_em would "
            "score a "
            "rollout that never answers against the template's last one: keep exactly one example"
        )
    return None
