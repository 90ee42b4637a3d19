"""The port a server listens on: bound before the server starts, so that a port another program
holds is known at once, as one line for the user (`PortInUse.advice`), before any start-up work.

Kept apart from the server (and uvicorn) so the CLI can name a busy port without importing it.
"""

from __future__ import annotations

import errno
import socket
from typing import cast


class PortInUse(OSError):
    """Another program listens on the port: one line for the user, not a traceback."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(errno.EADDRINUSE, f"port {port} is already in use")
        self.host = host
        self.port = port

    def advice(self, command: str) -> str:
        """What the CLI prints: the port, a likely reason, and a free port to try instead."""
        return (
            f"port {self.port} is already in use (a gateway or the demo still running?); "
            f"choose another with --port, e.g. bench-gateway {command} --port "
            f"{free_port(self.host)}"
        )


def bound_socket(host: str, port: int, *, share_port: bool = False) -> socket.socket:
    """A TCP socket bound to (*host*, *port*), not yet listening, or `PortInUse`. Bound here,
    before the server starts, so a busy port is known before any start-up work. *share_port*:
    SO_REUSEPORT, for `serve`'s workers, one socket each on the same port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if share_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(host, port) from None
        raise
    return sock


def url_of(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return cast(int, sock.getsockname()[1])  # (typeshed: Any, as address shapes vary)
