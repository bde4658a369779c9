"""What the terminal shows is the data (issue 48 item 4): table output never reads a value as rich
markup or lets a control sequence reach the terminal, and Ctrl-C is one line wherever it lands."""

import os
import signal
import subprocess
import sys
import time

import pytest

from synth.store.publish import VersionSpec, publish_version

HOSTILE = (
    "[/m/0abc#1, /m/04jpl#5]",  # FB15k ids in evidence_doc_ids: once a MarkupError traceback
    "[link=https://evil.example]click[/link]",
    "\x1b]8;;https://evil.example\x07hyperlink\x1b]8;;\x07",  # OSC 8
    "\x1b[31mred\x1b[0m and \x1b[2J cleared",
    "right\u202eto left",
)


def test_summarize_on_a_generated_version_prints_a_table(run_cli):
    code, _, err = run_cli("generate", "--recipe", "multihop", "--n", "4", "--llm", "fake", "--quiet")
    assert code == 0, err
    code, out, err = run_cli("sql", "summarize items")
    assert code == 0 and "Traceback" not in err and "MarkupError" not in err, err
    assert "column_name" in out and "evidence_doc_ids" in out and "│" in out


def test_markup_and_control_sequences_in_cells_print_as_visible_text(settings, make_item, run_cli):
    items = [make_item(index, question=text) for index, text in enumerate(HOSTILE)]
    publish_version(settings, VersionSpec(name="hostile", recipe="multihop"), {"items": items})
    code, out, err = run_cli("sql", "select question from items order by id")
    assert code == 0 and err == "", err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    for shown in (
        "[/m/0abc#1, /m/04jpl#5]",
        "[link=https://evil.example]click[/link]",
        "\\x1b]8;;https://evil.example\\x07hyperlink",
        "\\x1b[31mred\\x1b[0m and \\x1b[2J cleared",
        "right\\u202eto left",
    ):
        assert shown in out, shown
    code, out, _ = run_cli("sql", "select '[bold]x[/bold]' as \"[red]column\"")
    assert "[bold]x[/bold]" in out and "[red]column" in out


def _as_from_a_terminal() -> None:
    """The child starts as a shell starts a command: Ctrl-C neither ignored nor blocked, whatever an
    earlier test left in this worker (a child inherits both; the suite saw Ctrl-C go unheard)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.parametrize("delay", [0.3, 2.5])
def test_ctrl_c_is_one_line_while_loading_and_inside_a_query(settings, make_item, delay):
    publish_version(settings, VersionSpec(name="demo", recipe="multihop"), {"items": [make_item(0)]})
    command = [sys.executable, "-c", "from synth.cli.entry import main; main()"]
    query = "select count(*) from range(1000000000000::bigint)"
    process = subprocess.Popen(
        [*command, "sql", query, "--timeout", "120"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SYNTH_HOME": str(settings.home)},
        preexec_fn=_as_from_a_terminal,
    )
    time.sleep(delay)  # 0.3 s: the CLI's libraries are loading; 2.5 s: DuckDB is running the query
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # say what the process said before it went on regardless
        process.kill()
        _, err = process.communicate()
        raise AssertionError(f"Ctrl-C went unheard for 60 s; the process said: {err[-2000:]!r}") from None
    lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode == 130 and lines == ["interrupted; finished work is kept, rerun to resume"], err
