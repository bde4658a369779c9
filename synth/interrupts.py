"""Whether Ctrl-C was pressed in this process, remembered: a KeyboardInterrupt raised while a library
loads can be swallowed by its broad `except:`, and the command would then run on as if unheard (seen
with `synth sql` on a loaded machine). Waits that can check (`synth.store.result_reader.in_worker`)
ask `requested()` too."""

import signal

_requested = False


def requested() -> bool:
    return _requested


def _on_ctrl_c(signum, frame) -> None:
    global _requested
    _requested = True
    raise KeyboardInterrupt


def remember_ctrl_c() -> None:
    """Raise KeyboardInterrupt on Ctrl-C, as Python does, and remember it was pressed (a process
    started with Ctrl-C ignored keeps ignoring it)."""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_ctrl_c)
