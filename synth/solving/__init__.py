"""Solving questions to judge them: the solver panel (model solvers and the BM25 reader under
closed-book, search and gold-evidence conditions), answer judging, and rejection sampling of
teacher rollouts. The filters that turn these results into verdicts live in `synth.filters`."""
