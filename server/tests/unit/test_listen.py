"""Binding the server's sockets: an error says which setting to change."""

from __future__ import annotations

import socket

import pytest
from ds_server import listen


def test_a_taken_port_is_the_ports_fault() -> None:
    with socket.create_server(("127.0.0.1", 0)) as holder:
        port = holder.getsockname()[1]
        with pytest.raises(listen.ListenError) as refused:
            listen.bind("127.0.0.1", port)
    assert refused.value.setting == "port"
    assert str(refused.value) == f"127.0.0.1:{port} is already in use by another process"


@pytest.mark.parametrize("host", ["no-such-host.invalid", "192.0.2.1"])
def test_a_host_that_is_not_this_machine_is_the_hosts_fault(host: str) -> None:
    with pytest.raises(listen.ListenError) as refused:
        listen.bind(host, 0)
    assert refused.value.setting == "host"
    assert repr(host) in str(refused.value)


def test_bound_sockets_are_not_yet_listening() -> None:
    sockets = listen.bind("127.0.0.1", 0)
    try:
        assert len(sockets) == 1
        port = sockets[0].getsockname()[1]
        # Connections are refused until the server listens (after its store is open).
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
    finally:
        for sock in sockets:
            sock.close()
