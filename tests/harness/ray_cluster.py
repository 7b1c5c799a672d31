"""A two-node Ray cluster on loopback for the tests: ``ray start --head --block`` plus a second node, ended by their process ids.

Teardown stops exactly the processes the fixture started (no ``ray stop``, which would end every
Ray process on the machine). Shared by ``test_ray_cluster.py`` and ``test_ray_generation.py``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

__all__ = ["RAY", "QUIET", "FAST_HEALTH", "needs_ray", "Cluster", "cluster", "_free_port", "_tree", "_kill", "_stop"]

RAY = Path(sys.executable).parent / "ray"
QUIET = {"FASTMCP_SHOW_SERVER_BANNER": "false", "FASTMCP_CHECK_FOR_UPDATES": "off", "RAY_USAGE_STATS_ENABLED": "0"}
# The head notices a dead node within about 3 s instead of Ray's default ~30 s.
FAST_HEALTH = {"RAY_health_check_initial_delay_ms": "1000", "RAY_health_check_period_ms": "1000", "RAY_health_check_timeout_ms": "1000",
               "RAY_health_check_failure_threshold": "3"}
needs_ray = pytest.mark.skipif(not RAY.is_file(), reason="ray is not installed (pip install 'taskloom[ray]')")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    address: str
    head: subprocess.Popen[bytes]
    worker: subprocess.Popen[bytes]
    env: dict[str, str]  # what a driver needs to join: the cluster's auth token


def _start_node(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            [str(RAY), "start", "--block", "--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats",
             "--include-log-monitor=false",  # one process less per node: drivers here never stream the workers' logs
             f"--dashboard-agent-listen-port={_free_port()}", *args],
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )


def _alive_nodes(address: str, env: dict[str, str]) -> int:
    shown = subprocess.run([str(RAY), "status", f"--address={address}"], env=env, capture_output=True, text=True, timeout=60)
    active = shown.stdout.split("Active:", 1)[-1].split("Pending:", 1)[0]
    return sum(" node_" in line for line in active.splitlines())


#: What ``ray start`` prints once its node is up and registered with the head (it waits for that itself).
STARTED = b"Ray runtime started."


def _wait_started(node: subprocess.Popen[bytes], log: Path, deadline: float) -> None:
    """Wait until ``ray start`` says its node is up (a line in its log), failing with the log when it exits or takes too long."""
    while STARTED not in log.read_bytes():
        assert node.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
        time.sleep(0.1)


def _tree(pid: int) -> list[psutil.Process]:
    """A process and all its descendants (a node: ``ray start``, its raylet, the Ray workers, their browsers)."""
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def _kill(pid: int) -> None:
    """Kill a node's whole process tree at once, as a machine that loses power would."""
    procs = _tree(pid)
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(procs, timeout=10)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End a node we started: SIGTERM to ``ray start --block`` (it stops its raylet), then kill what is left of its tree."""
    procs = _tree(proc.pid)
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    psutil.wait_procs(procs, timeout=15)
    for left in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            left.kill()
    proc.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    temp = Path(tempfile.mkdtemp(prefix="tlray-", dir="/tmp"))  # short: Ray's socket paths live under it
    auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}  # Ray's token authentication, with this cluster's own token
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")} | QUIET | FAST_HEALTH | auth
    port = _free_port()
    address = f"127.0.0.1:{port}"
    head = _start_node(["--head", f"--port={port}", "--include-dashboard=false", f"--dashboard-port={_free_port()}",
                        f"--ray-client-server-port={_free_port()}", f"--temp-dir={temp}"], env, temp / "head.log")
    nodes: list[subprocess.Popen[bytes]] = [head]
    try:
        deadline = time.monotonic() + 120
        _wait_started(head, temp / "head.log", deadline)
        worker = _start_node([f"--address={address}"], env, temp / "worker.log")
        nodes.append(worker)
        _wait_started(worker, temp / "worker.log", deadline)
        while _alive_nodes(address, env) < 2:  # registered already; this is the head's own word for it
            assert worker.poll() is None and time.monotonic() < deadline, (temp / "worker.log").read_text()
            time.sleep(0.2)
        yield Cluster(address, head, worker, auth)
    finally:
        for node in reversed(nodes):
            _stop(node)
        shutil.rmtree(temp, ignore_errors=True)
