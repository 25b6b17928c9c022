"""Connection limits uvicorn does not have: a deadline for a request's headers and caps on open
connections, overall and per client address.

uvicorn (0.54) closes a kept-alive connection only while it is wholly idle (any byte cancels
`timeout_keep_alive`) and has no deadline for the headers of a request, so a client that sends
one byte every few seconds holds its connection, and a file descriptor, forever; its
`limit_concurrency` answers 503 once headers are in but still accepts every connection. These
protocol subclasses add the smallest missing part: a timer armed when a connection opens and
again after each answer, cancelled only when the next request's headers are complete (the
protocol then starts a new request cycle), and a refusal at accept time past the caps. The body
has its own deadline in the ASGI app (`app.Guard`), which also covers Ray Serve.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from .logs import get_logger


def limited_protocol(base: type[asyncio.Protocol], *, header_timeout: float,
                     max_connections: int, max_client_connections: int) -> type[asyncio.Protocol]:
    """A subclass of uvicorn's HTTP protocol class `base` (`H11Protocol` or
    `HttpToolsProtocol`) with the header deadline and the connection caps."""
    open_by_client: Counter[str] = Counter()
    log = get_logger()

    class Limited(base):  # type: ignore[valid-type, misc]
        _header_timer: asyncio.TimerHandle | None = None
        _counted: str | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            peer = transport.get_extra_info("peername")
            client = str(peer[0]) if isinstance(peer, tuple) and peer else ""
            # uvicorn has just added this connection to its set of open ones.
            too_many = len(self.connections) > max_connections
            if too_many or open_by_client[client] >= max_client_connections:
                log.warning("connection refused", extra={
                    "client": client, "reason": "max_connections" if too_many
                    else "max_client_connections"})
                transport.abort()
                return
            open_by_client[client] += 1
            self._counted = client
            self._arm_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._counted is not None:
                open_by_client[self._counted] -= 1
                if open_by_client[self._counted] <= 0:
                    del open_by_client[self._counted]
                self._counted = None
            self._cancel_header_timer()
            super().connection_lost(exc)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm_header_timer()  # the next request's headers get the same deadline

        def _arm_header_timer(self) -> None:
            self._cancel_header_timer()
            waiting_since = self.cycle  # the cycle of the last request with complete headers
            self._header_timer = self.loop.call_later(
                header_timeout, self._headers_overdue, waiting_since)

        def _cancel_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_overdue(self, waiting_since: Any) -> None:
            self._header_timer = None
            # A new cycle means the headers came in time; an unfinished one is being answered.
            if self.cycle is not waiting_since or (
                    self.cycle is not None and not self.cycle.response_complete):
                return
            if not self.transport.is_closing():
                log.info("connection closed", extra={
                    "client": self._counted, "reason": "header_timeout"})
                self.transport.close()

    Limited.__name__ = Limited.__qualname__ = f"Limited{base.__name__}"
    return Limited


def http_protocol_class() -> type[asyncio.Protocol]:
    """The HTTP protocol uvicorn's `http="auto"` picks: httptools if installed, else h11."""
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol
