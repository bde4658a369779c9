"""`synth browse`: a local, read-only web page over the datasets."""

import ipaddress
import socket

import click

from synth.cli.options import load_settings


@click.command()
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port to listen on.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind. Anything but loopback shows the data to the network: say so explicitly.",
)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Another name browsers may reach the page by (its Host header); loopback names and --host always work.",
)
def browse(port: int, host: str, allow_hosts: tuple[str, ...]) -> None:
    """Look at datasets in a web browser: versions, funnels, items and their construction.

    Read-only and offline (everything it serves ships with synth). Requests naming another host
    are refused (a web page cannot reach it by rebinding its DNS name), and the SQL console runs
    queries posted from its own page only. Stop it with Ctrl-C.
    """
    import uvicorn

    from synth.browse.app import make_app
    from synth.browse.guard import LOOPBACK_NAMES
    from synth.errors import ConfigError

    wildcard = host in ("0.0.0.0", "::")
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    allowed = [*LOOPBACK_NAMES, *allow_hosts, *([] if wildcard else [f"[{host}]" if ":" in host else host])]
    if not loopback:
        click.echo(
            f"warning: serving the datasets to the network on {host} (--host); anyone who can reach it can read them"
            + (" (by the names --allow-host gives)" if wildcard else ""),
            err=True,
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {error.strerror}; choose another --port (0 picks a free one)"
        ) from None
    listener.listen(128)
    bound = listener.getsockname()[1]
    shown = "127.0.0.1" if wildcard else (f"[{host}]" if ":" in host else host)
    click.echo(f"synth browse: http://{shown}:{bound}/ (Ctrl-C to stop)")
    config = uvicorn.Config(make_app(load_settings(), allowed_hosts=allowed), log_level="warning")
    uvicorn.Server(config).run(sockets=[listener])
