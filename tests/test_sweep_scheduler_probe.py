"""``sweep --scheduler`` at a port that is not a dask scheduler: refused naming the flag
(exit 2), without letting dask size an allocation from the peer's bytes."""

from __future__ import annotations

import socket
import struct
import threading

import pytest

from qcnmodel.cli import main


def _serve(reply: bytes, wait_for_request: bool, hold: bool = True):
    """A local TCP server answering every connection with ``reply`` (after reading the
    client's first bytes when ``wait_for_request``, as an HTTP server does), then holding
    the connection until the client leaves (``hold``) or closing it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(60)

    def answer(conn):
        with conn:
            try:
                if wait_for_request:
                    conn.recv(65536)
                conn.sendall(reply)
                if hold:
                    conn.recv(65536)
            except OSError:
                pass

    def loop():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return server


HTTP = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 4


@pytest.mark.parametrize(
    ("reply", "wait", "hold", "needle"),
    [
        (HTTP, True, True, "no handshake within 3 s"),  # an HTTP server: waits for a request
        (HTTP, False, True, "claims"),  # 'HTTP/1.1' read as a length: 3.5e18 bytes
        (struct.pack("Q", 3 << 30) + b"x" * 64, False, True, "claims 3221225472 bytes"),
        (b"abc", False, False, "closed after 3 of 8 bytes"),
        (b"abc", False, True, "no handshake within 3 s"),
    ],
)
def test_a_peer_that_is_not_a_scheduler_is_named(reply, wait, hold, needle, tmp_path, capsys):
    import dask
    import distributed  # noqa: F401 - its configuration, which the block below changes

    server = _serve(reply, wait, hold)
    try:
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        argv = ["sweep", "--model", "fopdt", "--rtt", "10us,20us", "--out",
                str(tmp_path / "s.nc"), "--scheduler", address, "--quiet"]  # fmt: skip
        with dask.config.set({"distributed.comm.timeouts.connect": "3s"}):
            assert main(argv) == 2
    finally:
        server.close()
    err = capsys.readouterr().err
    assert f"scheduler: '{address}' did not answer as a dask scheduler" in err, err
    assert needle in err and "Traceback" not in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no output, no checkpoint


def test_a_real_scheduler_passes_the_probe():
    distributed = pytest.importorskip("distributed")
    from qcnmodel.studies.sweep import probe_scheduler

    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp://",
                                  dashboard_address=None) as cluster:  # fmt: skip
        assert cluster.scheduler_address.startswith("tcp://")
        probe_scheduler(cluster.scheduler_address, timeout=10)
