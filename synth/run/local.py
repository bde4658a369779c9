"""A run in this process (what `synth generate` does): its stages streamed (`synth.run.streaming`)
or, with `--staged`, the plan's stages in order, each over the whole batch; then publishing."""

from synth.llm.base import LLMBackend
from synth.progress import Progress
from synth.run.plan import PLAN
from synth.run.publishing import publish
from synth.run.runner import Run, RunRequest, prepare_run
from synth.run.streaming import stream_run
from synth.schemas import DatasetVersion
from synth.settings import Settings


def run_staged(run: Run) -> None:
    """Every stage of the plan in order, each once the one before is saved for every shard; a
    stage's shards together in one event loop (they share each model's request pool)."""
    for stage in PLAN:
        stage.make_all(run)


def run_locally(
    settings: Settings,
    request: RunRequest,
    progress: Progress | None = None,
    backends: dict[str, LLMBackend] | None = None,
) -> DatasetVersion:
    """Every stage in this process; a run published earlier returns its version (nothing is made
    or published twice)."""
    run_dir, config = prepare_run(settings, request)
    run = Run(settings, run_dir, progress, backends=backends, config=config)
    try:
        with run.outcome_recorded():
            earlier = run.published_version()
            if earlier is not None:
                return earlier
            if request.staged:
                run_staged(run)
            else:
                stream_run(run)
            return publish(run)
    finally:
        run.close()
        run.dir.release()
