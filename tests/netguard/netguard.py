"""Records every attempt to reach a non-loopback address (a connection, or a name lookup of
anything but localhost) in this process, to the file named by SYNTH_TEST_NETGUARD_LOG.

Installed as a Python audit hook: in the test process by tests/conftest.py, and in every Python
process the tests start through this folder's sitecustomize.py (the folder is put on PYTHONPATH).
The test session fails at the end if the file is not empty.
"""

import ipaddress
import os
import socket
import sys
import traceback

_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


def _is_local(host) -> bool:
    if host is None:
        return True
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host).strip("[]").split("%")[0]
    if host.lower() in _LOCAL_NAMES or host == socket.gethostname():
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def _is_address(host) -> bool:
    try:
        ipaddress.ip_address(str(host.decode() if isinstance(host, bytes) else host).strip("[]").split("%")[0])
    except ValueError:
        return False
    return True


def _record(what: str) -> None:
    path = os.environ.get("SYNTH_TEST_NETGUARD_LOG")
    if not path:
        return
    stack = "".join(traceback.format_stack(limit=40)[:-2])
    test = os.environ.get("PYTEST_CURRENT_TEST", "")
    with open(path, "a") as log:
        log.write(f"pid {os.getpid()} {' '.join(sys.argv[:3])} {test}: {what}\n{stack}\n")


def _hook(event: str, args) -> None:
    if event == "socket.connect":
        sock, address = args
        if (
            sock.family in (socket.AF_INET, socket.AF_INET6)
            and isinstance(address, tuple)
            and not _is_local(address[0])
        ):
            _record(f"connect to {address}")
    elif event == "socket.getaddrinfo":  # a DNS query; an address literal resolves locally, its connect is checked
        if not _is_local(args[0]) and not _is_address(args[0]):
            _record(f"name lookup of {args[0]!r}")


def install() -> None:
    if not getattr(sys, "_synth_netguard", False):
        sys._synth_netguard = True
        sys.addaudithook(_hook)
