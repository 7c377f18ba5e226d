"""Local TCP ports: a free one to listen on, and whether a given one is free.  One place for the
demo, its DOI part and the consumer app (each had its own copy)."""

from __future__ import annotations

import socket


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the OS picks it)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def port_free(host: str, port: int, *, reuse_address: bool = False) -> bool:
    """Whether ``port`` on ``host`` can be bound now.  ``reuse_address``: whether a server that sets
    SO_REUSEADDR (as the embedded broker does) could listen there: connections of a process that
    just ended (TIME_WAIT) do not count, a listener does."""
    with socket.socket() as s:
        if reuse_address:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True
