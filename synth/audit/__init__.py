"""`synth audit`: a reader's judgement of a version as data (sample.py: which items; sheets.py: the
blind and reveal sheets and reading them back; rubric.py: the scale; judge.py: a served model as a
reader; record.py: checking and storing verdicts; summary.py: figures with Wilson intervals)."""
