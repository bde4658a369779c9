"""`synth search index` killed midway resumes without embedding a finished batch again."""

import json
import os
import re
import signal
import subprocess
import sys
import time


def test_a_killed_dense_build_resumes_from_its_last_checkpoint(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    with open(corpus, "w") as handle:
        for number in range(640):
            handle.write(
                json.dumps(
                    {
                        "id": f"p{number}",
                        "contents": f'"Place {number}"\\nPlace {number} lies by river {number % 37} '
                        f"and was founded in year {1000 + number}.",
                    }
                )
                + "\n"
            )
    command = [
        sys.executable,
        "-m",
        "synth.cli.main",
        "search",
        "index",
        "--corpus",
        str(corpus),
        "--retriever",
        "dense",
        "--checkpoint-every",
        "32",
    ]
    env = {**os.environ, "SYNTH_HOME": str(tmp_path / "home")}
    build = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    search = tmp_path / "home" / "cache" / "search"
    deadline, done = time.monotonic() + 300, 0
    while done < 64:
        assert build.poll() is None, "the build finished before it could be killed: " + build.stderr.read()
        assert time.monotonic() < deadline
        progress = list(search.glob(".dense-*.partial/progress.json"))
        try:
            done = json.loads(progress[0].read_text())["done"] if progress else 0
        except (OSError, ValueError):
            done = 0
        time.sleep(0.02)
    build.send_signal(signal.SIGKILL)
    build.wait()
    killed_at = json.loads(progress[0].read_text())["done"]
    assert 64 <= killed_at < 640 and not list(search.glob("dense-*/vectors.npy"))

    resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming a killed build: {killed_at:,}/640 documents already embedded" in resumed.stderr
    embedded = int(re.search(r"embedded ([\d,]+) documents in this run", resumed.stderr).group(1).replace(",", ""))
    assert embedded == 640 - killed_at
    assert re.search(
        r"dense: ready in .* \(640 passages, .*\); [\d,]+ MiB on disk, peak memory of this command so far [\d,]+ MiB",
        resumed.stdout,
    ), resumed.stdout

    import numpy as np

    from synth.search.corpus import Corpus
    from synth.search.embeddings import load_embedder

    documents = Corpus.from_jsonl(corpus).documents
    model, _ = load_embedder()
    vectors = np.load(next(search.glob("dense-*/vectors.npy")))
    sample = [0, killed_at - 1, killed_at, 639]  # both sides of the kill
    expected = model.encode([f"{documents[i].title}. {documents[i].text}" for i in sample], normalize_embeddings=True)
    assert np.allclose(vectors[sample], expected, atol=1e-4)
