"""The verl check stops only what its own main_ppo started: a child it spawned (as main_ppo spawns
its Ray head) goes with it, and an unrelated process (another Ray cluster of the user's) stays."""

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import psutil

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "check_verl_export.py"


def _check_module():
    spec = importlib.util.spec_from_file_location("check_verl_export", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stopping_main_ppo_stops_its_own_children_and_nothing_else():
    unrelated = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    sleeper = "import time; time.sleep(60)"
    spawner = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {sleeper!r}]); time.sleep(60)"
    main = subprocess.Popen([sys.executable, "-c", spawner], start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while not psutil.Process(main.pid).children() and time.monotonic() < deadline:
            time.sleep(0.05)
        (child,) = psutil.Process(main.pid).children()
        _check_module().stop_own(main)
        main.wait(timeout=15)
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
        assert unrelated.poll() is None
    finally:
        unrelated.kill()
        main.kill()
