"""`synth browse`: a local, read-only web page over the store (app.py: routes; data.py: reads;
construction.py: an item's drawing; diff.py: two versions compared; evals.py: eval runs side by
side; background.py: the app in a thread, for tests and scripts)."""
