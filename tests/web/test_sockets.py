"""The shared listening sockets (web/sockets.py): what asyncio needs to answer without delay."""

from __future__ import annotations

import asyncio
import socket

import pytest

from meta_evaluator.errors import ProjectError
from meta_evaluator.web.sockets import check_port, free_port, listen


def test_sockets_say_they_are_tcp_so_replies_are_not_held_back() -> None:
    """asyncio sets TCP_NODELAY on accepted connections only for sockets of protocol TCP;
    without it each keep-alive reply's body waited ~40 ms for the client's delayed ACK."""
    sockets = listen("127.0.0.1", 0, who="test")
    try:
        (sock,) = sockets
        assert sock.proto == socket.IPPROTO_TCP
        port = sock.getsockname()[1]

        async def accepted_nodelay() -> int:
            flags: list[int] = []

            async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                raw = writer.get_extra_info("socket")
                flags.append(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                writer.close()

            server = await asyncio.start_server(handle, sock=sock)
            async with server:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                for _ in range(200):
                    if flags:
                        break
                    await asyncio.sleep(0.01)
                writer.close()
            return flags[0]

        assert asyncio.run(accepted_nodelay()) != 0
    finally:
        for sock in sockets:
            sock.close()


@pytest.mark.parametrize("port", [-1, 65536, "80", True, 1.0])
def test_a_port_out_of_range_names_the_caller(port: object) -> None:
    with pytest.raises(ProjectError, match=r"^launch_viewer: port must be a whole") as caught:
        check_port(port, who="launch_viewer")
    assert caught.value.field == "port"


def test_free_port_is_free() -> None:
    port = free_port()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))
