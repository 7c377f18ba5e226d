"""Local TCP ports: a free one to listen on, and whether a given one is free.  One place for the
demo, its DOI part and the consumer app (each had its own copy)."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_free(host: str, port: int, *, reuse: bool = False) -> bool:
    """Whether ``port`` on ``host`` can be bound now (``reuse``: a port in TIME_WAIT counts as free, as
    it does for a server that sets SO_REUSEADDR, the embedded broker's way)."""
    with socket.socket() as s:
        if reuse:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True
