"""`synth browse`: a local, read-only web page over the store (app.py: routes; data.py: reads)."""
