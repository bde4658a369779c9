"""A run of a recipe, from its request to its published version: the plan of stages (`runner`), the
local streaming scheduler (`streaming`), the Prefect flows (`flows`, `orchestrate`, `prefect_env`),
the models and flows file (`flows_file`), the run's limits (`limits`) and the library entry
point (`generate`). The recipes themselves (`synth.pipelines`) sit below it and never import it."""
