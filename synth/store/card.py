"""A version's dataset card (Markdown): what it is, how it was made, how hard it is, and what readers
found, with intervals. `synth datasets card` prints it; the Hugging Face export writes it as the
folder's README.md, so the figures travel with the data."""

from synth.settings import Settings
from synth.store.describe import describe_version


def dataset_card(settings: Settings, ref: str) -> str:
    described = describe_version(settings, ref, examples=3)
    version = described["version"]
    ref = f"{version['name']}@{version['version']}"
    lines = [
        f"# {ref}",
        "",
        f"Made by synth's `{version['recipe']}` recipe (seed {version.get('seed')}, config `{version['config_hash']}`, "
        f"code {version['code_version']}); knowledge graph `{version.get('kg_snapshot') or 'none'}`; "
        f"parent `{version.get('parent') or 'none'}`.",
        "",
        "| table | rows |",
        "|---|---|",
        *(f"| {table} | {count} |" for table, count in (version.get("row_counts") or {}).items()),
        "",
        "## Difficulty",
        "",
        "| label | items |",
        "|---|---|",
        *(f"| {label} | {count} |" for label, count in described["difficulty"].items()),
        "",
        "| hops | items |",
        "|---|---|",
        *(f"| {hops} | {count} |" for hops, count in described["hops"].items()),
        "",
        "## What readers found",
        "",
    ]
    audits = described["audits"]
    if not audits:
        lines.append("No reader has audited this version (`synth audit sample` writes the sheets).")
    else:
        lines += [
            "Shares with Wilson 95% intervals; the rubric is synth's docs/audit.md.",
            "",
            "| reader | sample (seed) | style | items | good / ok / bad | right | only answer | bad "
            "| bad, answer right |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for run in audits:
            for style, figures in run["summary"].get("by_style", {}).items():
                lines.append(
                    f"| {run['reader_kind']}: {run['reader']} | {run['sample_id']} ({run['seed']}) | {style} | "
                    f"{figures['items']} | {figures['good']} / {figures['ok']} / {figures['bad']} | "
                    f"{shown(figures['right'])} | {shown(figures['only'])} | {shown(figures['bad_share'])} | "
                    f"{shown(figures.get('bad_when_right'))} |"
                )
    lines += ["", "## Examples", ""]
    lines += [f"- {row['question']} (answer: {row['answer']}; {row['hops']} hops)" for row in described["examples"]]
    return "\n".join(lines) + "\n"


def shown(figure: dict | None) -> str:
    """ "57% [39-73]" for a share with its interval; "-" where nothing was said."""
    if not figure or figure.get("share") is None:
        return "-"
    low, high = figure["ci95"]
    return f"{figure['share']:.0%} [{low:.0%}-{high:.0%}] of {figure['of']}"
