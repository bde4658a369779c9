"""The network guard itself: a child process's attempt to reach an outside address is recorded
(and blocked here before any packet leaves), loopback is not."""

import os
import subprocess
import sys

CHILD = """
import socket, sys
def block(event, args):
    connect = event == "socket.connect" and "127.0.0.1" not in str(args)
    outside = connect or event == "socket.getaddrinfo" and args[0] == "example.com"
    if outside:
        raise PermissionError("blocked by the test")
sys.addaudithook(block)
for target in (("127.0.0.1", 9), ("192.0.2.1", 80)):
    try:
        socket.create_connection(target, timeout=0.2)
    except OSError:
        pass
try:
    socket.getaddrinfo("example.com", 443)
except OSError:
    pass
"""


def test_outside_contacts_of_child_processes_are_recorded(tmp_path):
    log = tmp_path / "contacts.log"
    subprocess.run([sys.executable, "-c", CHILD], env={**os.environ, "SYNTH_TEST_NETGUARD_LOG": str(log)}, check=True)
    recorded = log.read_text()
    assert "connect to ('192.0.2.1', 80)" in recorded and "name lookup of 'example.com'" in recorded
    assert "127.0.0.1" not in recorded
