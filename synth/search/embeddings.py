"""The embedding model: the bundled all-MiniLM-L6-v2 unless a folder is given; loads offline."""

import os
from pathlib import Path

from synth.llm.embedded import embedding_model_path
from synth.llm.platform import hide_mismatched_vision_packages

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"


def load_embedder(model_path: Path | None = None):
    """(SentenceTransformer on CPU or CUDA, a short model name for cache keys)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a hub: the weights are local

    hide_mismatched_vision_packages()
    import torch
    from sentence_transformers import SentenceTransformer

    path = Path(model_path) if model_path is not None else embedding_model_path()
    name = path.name if model_path is not None else DEFAULT_EMBEDDER
    device = "cuda" if torch.cuda.is_available() else "cpu"
    return SentenceTransformer(str(path), device=device), name
