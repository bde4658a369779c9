"""`synth browse`: a local, read-only web page over the datasets."""

import ipaddress

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
def browse(port: int, host: str) -> None:
    """Look at datasets in a web browser: versions, funnels, items and their construction.

    Read-only and offline (everything it serves ships with synth). Stop it with Ctrl-C.
    """
    import uvicorn

    from synth.browse.app import make_app

    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        click.echo(
            f"warning: serving the datasets to the network on {host} (--host); anyone who can reach it can read them",
            err=True,
        )
    click.echo(f"synth browse: http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}/ (Ctrl-C to stop)")
    uvicorn.run(make_app(load_settings()), host=host, port=port, log_level="warning")
