"""A real Ray cluster of a test's (or a benchmark's) own on this machine: one ``ray start --block``
per node, each on its own loopback address, temp dir, ports and ``DOCKER_HOST``.

Ray rewrites ``127.0.0.1`` to the machine's routable address, so nodes use other loopback
addresses (``127.0.0.10``, ``127.0.0.11``). Usage stats are off and token authentication is on
with a token made for the run. Every node is stopped by its own process id (SIGTERM to its
``ray start --block``, which ends its children; then its process group): never ``ray stop``,
which kills every Ray process on the host, other users' too.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

RAY = str(Path(sys.executable).with_name("ray"))
REPO = Path(__file__).resolve().parent.parent


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@dataclass
class RayNode:
    ip: str
    docker_host: str
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid


@dataclass
class RayNodes:
    """The head on ``ips[0]``, a worker on each further address; node i judges on
    ``docker_hosts[i]``."""

    root: Path
    ips: tuple[str, ...]
    docker_hosts: tuple[str, ...]
    object_store_bytes: int = 200_000_000
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    nodes: list[RayNode] = field(default_factory=list)
    address: str = ""

    def env(self) -> dict[str, str]:
        """What a driver needs in its environment to join (and what every node gets)."""
        return {
            "RAY_AUTH_MODE": "token",
            "RAY_AUTH_TOKEN": self.token,
            "RAY_USAGE_STATS_ENABLED": "0",
            # A node whose raylet dies is declared dead after 3 missed checks a second apart
            # (Ray's defaults: 5 of 3 s, slower still on a loaded machine).
            "RAY_health_check_period_ms": "1000",
            "RAY_health_check_failure_threshold": "3",
        }

    def start(self) -> RayNodes:
        head_port = free_port(self.ips[0])
        self.address = f"{self.ips[0]}:{head_port}"
        for position, (ip, docker_host) in enumerate(zip(self.ips, self.docker_hosts, strict=True)):
            self.start_node(ip, docker_host, head=position == 0, head_port=head_port)
        self.wait_for(len(self.ips))
        return self

    def start_node(self, ip: str, docker_host: str, *, head: bool, head_port: int = 0) -> RayNode:
        temp = self.root / f"node-{ip}"
        temp.mkdir(parents=True, exist_ok=True)
        ports = {
            name: free_port(ip)
            for name in (
                "node-manager-port",
                "object-manager-port",
                "dashboard-agent-listen-port",
                "dashboard-agent-grpc-port",
                "metrics-export-port",
                "runtime-env-agent-port",
            )
        }
        low = free_port(ip)
        command = [
            RAY,
            "start",
            "--block",
            f"--node-ip-address={ip}",
            "--num-cpus=1",
            f"--object-store-memory={self.object_store_bytes}",
            f"--resources={json.dumps({'guardrail_engine': 1})}",
            f"--temp-dir={temp}",
            "--disable-usage-stats",
            *(f"--{name}={port}" for name, port in ports.items()),
            f"--min-worker-port={low}",
            f"--max-worker-port={low + 20}",
        ]
        if head:
            command += [
                "--head",
                f"--port={head_port}",
                "--include-dashboard=false",
                f"--dashboard-port={free_port('127.0.0.1')}",
                f"--ray-client-server-port={free_port(ip)}",
            ]
        else:
            command.append(f"--address={self.address}")
        env = {
            **os.environ,
            **self.env(),
            "DOCKER_HOST": docker_host,
            # The judge actors import guardrail from this checkout.
            "PYTHONPATH": os.pathsep.join(filter(None, (str(REPO), os.environ.get("PYTHONPATH")))),
        }
        log = temp / "ray-start.log"
        with log.open("ab") as handle:
            process = subprocess.Popen(
                command, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
            )
        node = RayNode(ip, docker_host, process, log)
        self.nodes.append(node)
        return node

    def wait_for(self, count: int, timeout_s: float = 120.0) -> None:
        """Until ``count`` nodes answer ``ray status`` (via the head's GCS)."""
        deadline = time.monotonic() + timeout_s
        env = {**os.environ, **self.env()}
        while True:
            done = subprocess.run(
                [RAY, "status", f"--address={self.address}"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            alive = done.stdout.count("node_")
            if done.returncode == 0 and alive >= count:
                return
            for node in self.nodes:
                assert node.process is not None
                if node.process.poll() is not None:
                    raise RuntimeError(f"ray start on {node.ip} exited:\n{self.tail(node)}")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{count} Ray nodes did not come up in {timeout_s:g} s:\n{done.stdout}"
                    f"{done.stderr}\n" + "\n".join(self.tail(node) for node in self.nodes)
                )
            time.sleep(1)

    @staticmethod
    def tail(node: RayNode) -> str:
        return node.log.read_text(errors="replace")[-2000:] if node.log else ""

    def stop_node(self, node: RayNode) -> None:
        """SIGTERM to its ``ray start --block`` (it ends its own processes), then its group."""
        if node.process is None:
            return
        if node.process.poll() is None:
            node.process.terminate()
            try:
                node.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()
        with contextlib.suppress(ProcessLookupError):  # its session: anything left of it
            os.killpg(node.process.pid, signal.SIGKILL)
        node.process = None

    def stop(self) -> None:
        for node in reversed(self.nodes):  # workers first, the head last
            self.stop_node(node)
