"""A TCP proxy in front of PostgreSQL that can lose the answer to a COMMIT.

Armed with :meth:`CommitProxy.lose_next_commit`, it forwards the next ``COMMIT`` a
client sends, lets PostgreSQL commit and answer, then closes that client's connection
instead of passing the answer on: the transaction is stored, and the server that sent it
sees its connection die at COMMIT. That is the doubled-roll fault (docs/event-log.md), made
exact (no timing, no luck).

psycopg sends ``COMMIT`` as a simple-protocol Query message: ``Q``, its length (11) and
the text with a NUL. Connections must not use SSL (``sslmode=disable``) for the proxy to
read them.
"""

from __future__ import annotations

import contextlib
import socket
import threading

COMMIT = b"Q\x00\x00\x00\x0bCOMMIT\x00"


class _Link:
    def __init__(self, client: socket.socket, server: socket.socket):
        self.client, self.server = client, server
        self.doomed = False

    def close(self) -> None:
        for s in (self.client, self.server):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()


class CommitProxy:
    def __init__(self, upstream_port: int):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.armed = threading.Event()
        self.lost = threading.Event()  # set once a COMMIT's answer was lost
        self.links: list[_Link] = []
        self.lock = threading.Lock()
        self.closed = False
        self.thread = threading.Thread(target=self._accept, daemon=True, name="commit-proxy")
        self.thread.start()

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}?sslmode=disable"

    def lose_next_commit(self) -> None:
        self.lost.clear()
        self.armed.set()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            link = _Link(client, server)
            with self.lock:
                self.links.append(link)
            threading.Thread(target=self._to_server, args=(link,), daemon=True).start()
            threading.Thread(target=self._to_client, args=(link,), daemon=True).start()

    def _to_server(self, link: _Link) -> None:
        try:
            while data := link.client.recv(65536):
                if COMMIT in data and self.armed.is_set():
                    self.armed.clear()
                    link.doomed = True
                link.server.sendall(data)
        except OSError:
            pass
        link.close()

    def _to_client(self, link: _Link) -> None:
        try:
            while data := link.server.recv(65536):
                if link.doomed:
                    # PostgreSQL has answered the COMMIT (it is stored); its client never hears so.
                    self.lost.set()
                    break
                link.client.sendall(data)
        except OSError:
            pass
        link.close()

    def close(self) -> None:
        self.closed = True
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        with contextlib.suppress(OSError):
            self.listener.close()
        self.thread.join(5)
        with self.lock:
            for link in self.links:
                link.close()
