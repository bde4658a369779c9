"""CPU engine defaults: the dtype follows what the CPU computes natively."""

import pytest

from synth.llm import platform
from synth.llm.platform import cpu_has_native_bf16
from synth.llm.vllm_backend import VLLMBackend


@pytest.mark.parametrize(
    ("flags", "native"),
    [
        ("fpu sse2 avx2 fma", False),
        ("fpu avx2 avx512f avx512_bf16", True),
        ("fpu avx2 amx_tile amx_bf16", True),
    ],
)
def test_native_bf16_is_read_from_the_cpu_flags(tmp_path, flags, native):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    assert cpu_has_native_bf16(cpuinfo) is native


def test_an_unreadable_cpuinfo_means_no_native_bf16(tmp_path):
    assert cpu_has_native_bf16(tmp_path / "missing") is False


@pytest.mark.parametrize(("native", "dtype"), [(False, "float32"), (True, None)])
def test_a_cpu_engine_runs_float32_unless_bf16_is_native(monkeypatch, native, dtype):
    monkeypatch.setattr(platform, "torch_has_cuda", lambda: False)
    monkeypatch.setattr(platform, "cpu_has_native_bf16", lambda: native)
    arguments = VLLMBackend("some-model").engine_arguments()
    assert arguments.get("dtype") == dtype
    assert arguments["enforce_eager"] is True and arguments["enable_chunked_prefill"] is False


def test_a_configured_dtype_wins(monkeypatch):
    monkeypatch.setattr(platform, "torch_has_cuda", lambda: False)
    monkeypatch.setattr(platform, "cpu_has_native_bf16", lambda: False)
    assert VLLMBackend("some-model", engine_kwargs={"dtype": "bfloat16"}).engine_arguments()["dtype"] == "bfloat16"
