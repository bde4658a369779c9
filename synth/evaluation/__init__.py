"""`synth eval`: a declared model as a search agent on held-out items, scored and stored.

`tasks` reads what is evaluated (a version's split, or a benchmark file), `agent_run` runs the
model on it under the world's tools and contract, `report` turns the attempts into the figures,
and `synth.store.evals` keeps them as Parquet behind the `eval_runs` and `eval_attempts` views.
"""
