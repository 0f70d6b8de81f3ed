"""The listening sockets of our pages, bound by us so that every failure is ours to name.

Left to uvicorn, a port out of range raises `OverflowError`, a host that does not resolve
`socket.gaierror` (both with tracebacks), and a port in use is logged and ends the process with
`sys.exit(3)`, the command line's "batches still running". `listen` checks the port, resolves
the host and binds before uvicorn runs (`uvicorn.Server.run(sockets=...)`): each failure is a
`ProjectError` naming `port` or `host` with what to do instead, and with port 0 the address
announced is the one the kernel picked, not `:0`. Messages begin with `who`, the call the user
made (`launch_annotator`, `launch_viewer`).
"""

from __future__ import annotations

import errno
import socket
from typing import Any

from meta_evaluator.errors import ProjectError

__all__ = ["BACKLOG", "MAX_PORT", "check_port", "free_port", "listen"]

#: The highest TCP port.
MAX_PORT = 65535
#: Connections queued before they are accepted (uvicorn's default).
BACKLOG = 2048
#: Tries at one free port for every address of a name (`localhost`: 127.0.0.1 and ::1).
_FREE_PORT_TRIES = 5
#: Errors that mean an address of a name cannot be used here (no IPv6), not that it is taken.
_UNAVAILABLE = (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT)


def check_port(port: Any, *, who: str) -> int:
    """`port` as a port to bind: 0 (or None) for a free one, else 1 to 65535.

    Raises:
        ProjectError: `port` is no whole number in that range (`field="port"`).
    """
    if port is None:
        return 0
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= MAX_PORT:
        raise _socket_error(
            who,
            f"port must be a whole number from 0 to {MAX_PORT} (0 or none: a free one); got "
            f"{port!r}",
            python="give another with port=..., or omit it.",
            cli="give another with --port, or omit --port.",
            field="port",
        )
    return port


def listen(host: str, port: int, *, who: str) -> list[socket.socket]:
    """Sockets bound and listening on every address of `host`, all on one port.

    `port` 0 picks a port free on every address. The sockets are the caller's to close.

    Raises:
        ProjectError: `host` is empty, does not resolve or is not this machine's (`field="host"`),
            or `port` is in use or needs privileges (`field="port"`).
    """
    addresses = _resolve(host, port, who)
    for _ in range(_FREE_PORT_TRIES):
        sockets: list[socket.socket] = []
        try:
            chosen = _bind_all(host, port, addresses, sockets, who)
        except BaseException:
            for sock in sockets:
                sock.close()
            raise
        if chosen is not None:
            return sockets
        for sock in sockets:
            sock.close()
    raise _socket_error(
        who,
        f"found no port free on every address of {host!r} in {_FREE_PORT_TRIES} tries",
        python="give one with port=..., or a single address as the host.",
        cli="give one with --port, or a single address as --host.",
        field="port",
    )


def _resolve(host: str, port: int, who: str) -> list[tuple[int, Any]]:
    """The (family, address) pairs to bind for `host`, in the resolver's order, each once."""
    fix = (
        "give an address of this machine (127.0.0.1 for it alone, 0.0.0.0 for every "
        "interface) or a name that resolves to one with {}."
    )
    python, cli = fix.format("host=..."), fix.format("--host")
    if not host.strip():
        raise _socket_error(who, f"host {host!r} is empty", python=python, cli=cli, field="host")
    try:
        found = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP, flags=socket.AI_PASSIVE
        )
    except (OSError, UnicodeError, ValueError) as exc:  # gaierror; idna; a NUL in the name
        cause = getattr(exc, "strerror", None) or str(exc)
        raise _socket_error(
            who, f"host {host!r} is no address and no name that resolves ({cause})",
            python=python, cli=cli, field="host",
        ) from exc  # fmt: skip
    pairs: list[tuple[int, Any]] = []
    for family, _, _, _, address in found:
        if (family, address) not in pairs:
            pairs.append((family, address))
    return pairs


def _bind_all(
    host: str, port: int, addresses: list[tuple[int, Any]], sockets: list[socket.socket], who: str
) -> int | None:
    """Bind each address on one port, appending to `sockets`; the port, or None to try again.

    None when `port` was 0 and the port the first address got is taken on another one.
    """
    chosen = port
    unavailable: OSError | None = None
    for family, address in addresses:
        # IPPROTO_TCP named, not 0: asyncio sets TCP_NODELAY on accepted connections only
        # when the socket says it is TCP; without it a reply's body waits ~40 ms for the
        # client's delayed ACK on every keep-alive request.
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as asyncio does: `::` is IPv6 only, 0.0.0.0 apart
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind((address[0], chosen, *address[2:]))
            sock.listen(BACKLOG)
        except OSError as exc:
            sock.close()
            if exc.errno in _UNAVAILABLE and len(addresses) > 1:
                unavailable = exc  # `localhost` without IPv6: serve on the other addresses
                continue
            if exc.errno == errno.EADDRINUSE and port == 0 and sockets:
                return None
            raise _bind_error(host, chosen, exc, who) from exc
        sockets.append(sock)
        chosen = int(sock.getsockname()[1])
    if not sockets:
        assert unavailable is not None
        raise _bind_error(host, chosen, unavailable, who) from unavailable
    return chosen


def _bind_error(host: str, port: int, exc: OSError, who: str) -> ProjectError:
    shown = f"port {port} on {host}" if port else f"a free port on {host}"
    if exc.errno == errno.EADDRINUSE:
        return _socket_error(
            who, f"{shown} is in use",
            python="choose another with port=..., or omit it to pick a free one.",
            cli="choose another with --port, or omit --port to pick a free one.",
            field="port",
        )  # fmt: skip
    if exc.errno in _UNAVAILABLE:
        fix = (
            "give one of its addresses (127.0.0.1 for it alone, 0.0.0.0 for every interface) "
            "with {}."
        )
        return _socket_error(
            who, f"host {host!r} is not an address of this machine ({exc.strerror})",
            python=fix.format("host=..."), cli=fix.format("--host"), field="host",
        )  # fmt: skip
    if exc.errno in (errno.EACCES, errno.EPERM):
        return _socket_error(
            who, f"{shown}: {exc.strerror} (ports below 1024 need administrator rights)",
            python="choose a port above 1023 with port=..., or omit it.",
            cli="choose a port above 1023 with --port, or omit --port.",
            field="port",
        )  # fmt: skip
    return _socket_error(
        who, f"cannot listen on {shown} ({exc.strerror or exc})",
        python="choose another host or port (host=..., port=...).",
        cli="choose another --host or --port.",
        field="port",
    )  # fmt: skip


def free_port(host: str = "127.0.0.1", *, who: str = "free_port") -> int:
    """A TCP port that is free on every address of `host` now (another program may take it).

    Errors begin with `who`.

    Raises:
        ProjectError: `host` is empty, does not resolve or is not an address of this machine.
    """
    sockets = listen(host, 0, who=who)
    port = int(sockets[0].getsockname()[1])
    for sock in sockets:
        sock.close()
    return port


def _socket_error(who: str, problem: str, *, python: str, cli: str, field: str) -> ProjectError:
    """`who: problem; python`, which the command line says as `problem; cli` (its flags)."""
    return ProjectError(f"{who}: {problem}; {python}", problem=problem, cli_advice=cli, field=field)
