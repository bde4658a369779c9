from prefect_server import prefect_server  # noqa: F401  (the session fixture; tests/pipelines is on sys.path)
