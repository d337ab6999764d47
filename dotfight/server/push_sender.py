"""Posting one Web Push: to the addresses `push_endpoint` checked (the connection is pinned to them, the
TLS name and `Host` stay the endpoint's), never following a redirect, within a connect deadline and a
deadline for the whole exchange. Its answer is an `Outcome`, never an exception: a push service that
misbehaves is the push's failure, not the server's.

The HTTP client is aiohttp on the event loop: a silent push service costs an open socket and a waiting
coroutine until the deadline, never a thread, so it cannot hold up anybody else's push.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import logging
import socket
import ssl
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dotfight.server.push_endpoint import (
    EndpointPolicy,
    EndpointRefused,
    EndpointUnresolved,
    Resolve,
    Target,
    parse_endpoint,
)
from dotfight.server.push_message import PushMessage

if TYPE_CHECKING:
    from aiohttp.abc import AbstractResolver

logger = logging.getLogger(__name__)

USER_AGENT = "Dotfight (Web Push)"


class Outcome(enum.Enum):
    """What became of one push."""

    DELIVERED = "delivered"  # 2xx: the push service took it
    GONE = "gone"  # 404 or 410: the push service forgot the subscription
    REFUSED = "refused"  # the endpoint (or what its host resolves to now) is not one the server posts to
    UNANSWERED = "unanswered"  # no answer in time: unresolvable, unreachable, or silent past a deadline
    FAILED = "failed"  # another answer (a redirect, 4xx, 5xx): kept, logged


GONE_STATUSES = frozenset({404, 410})


@dataclass(frozen=True)
class Sent:
    """An outcome and the HTTP status behind it (0 when nothing answered)."""

    outcome: Outcome
    status: int = 0
    detail: str = ""


@functools.cache
def _pinned_resolver_class() -> type[AbstractResolver]:
    """The resolver class, made on first use: aiohttp (9 MB, 0.2 s) is loaded only by a server that pushes."""
    from aiohttp.abc import AbstractResolver, ResolveResult

    class PinnedResolver(AbstractResolver):
        """Answers aiohttp's lookup with addresses already checked, so that the connection goes where the
        check said, whatever DNS would answer a moment later."""

        def __init__(self, host: str, addresses: tuple[str, ...]) -> None:
            self._host = host
            self._addresses = addresses

        async def resolve(
            self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
        ) -> list[ResolveResult]:
            """Returns the pinned addresses (for the pinned host only)."""
            if host.rstrip(".").lower() != self._host:
                raise OSError(f"{host} is not the host this connection was checked for")
            return [
                {
                    "hostname": host,
                    "host": address,
                    "port": port,
                    "family": socket.AF_INET6 if ":" in address else socket.AF_INET,
                    "proto": socket.IPPROTO_TCP,
                    "flags": socket.AI_NUMERICHOST,
                }
                for address in self._addresses
            ]

        async def close(self) -> None:
            """Nothing to release."""

    return PinnedResolver


def pinned_resolver(host: str, addresses: tuple[str, ...]) -> AbstractResolver:
    """Returns an aiohttp resolver that answers `host` with `addresses` (and refuses any other host)."""
    resolver: AbstractResolver = _pinned_resolver_class()(host, addresses)  # type: ignore[call-arg]
    return resolver


class PushSender:
    """Posts pushes under a policy, resolving with `resolve` and timing out after `connect_timeout`
    (resolving and connecting, TLS included) and `timeout` (everything, from resolving to the status)."""

    def __init__(self, policy: EndpointPolicy, resolve: Resolve, *, connect_timeout: float, timeout: float):
        self.policy = policy
        self._resolve = resolve
        self._connect_timeout = connect_timeout
        self._timeout = timeout

    @functools.cached_property
    def _tls(self) -> ssl.SSLContext:
        # Made once (loading the CA bundle takes milliseconds), shared by every connection.
        return ssl.create_default_context()

    def check(self, endpoint: str) -> Target:
        """Checks an endpoint's URL (no lookup); raises EndpointRefused."""
        return parse_endpoint(endpoint, self.policy)

    async def post(self, target: Target, message: PushMessage) -> Sent:
        """Resolves and checks a checked endpoint's host, then posts the push to a checked address."""
        import aiohttp

        try:
            async with asyncio.timeout(self._timeout):
                addresses = await self._resolve(target)
                status = await self._post_to(target, addresses, message)
        except EndpointRefused as error:
            return Sent(Outcome.REFUSED, detail=str(error))
        except EndpointUnresolved as error:
            return Sent(Outcome.UNANSWERED, detail=str(error))
        except TimeoutError:
            return Sent(Outcome.UNANSWERED, detail=f"no answer within {self._timeout:g} s")
        except (aiohttp.ClientError, OSError, ValueError) as error:
            return Sent(Outcome.UNANSWERED, detail=f"{type(error).__name__}: {error}")
        if 200 <= status < 300:
            return Sent(Outcome.DELIVERED, status)
        if status in GONE_STATUSES:
            return Sent(Outcome.GONE, status)
        return Sent(Outcome.FAILED, status)

    async def _post_to(self, target: Target, addresses: tuple[str, ...], message: PushMessage) -> int:
        import aiohttp

        connector = aiohttp.TCPConnector(
            resolver=pinned_resolver(target.host, addresses),
            use_dns_cache=False,
            force_close=True,  # one exchange per connection: nothing pooled past its check
            limit=1,
            ssl=self._tls,
        )
        timeout = aiohttp.ClientTimeout(total=self._timeout, connect=self._connect_timeout)
        async with (
            aiohttp.ClientSession(
                connector=connector, timeout=timeout, trust_env=False, headers={"User-Agent": USER_AGENT}
            ) as session,
            session.post(
                target.url, data=message.body, headers=message.headers, allow_redirects=False
            ) as response,
        ):
            # Only the status matters; the body is never read (a push service has nothing to say in it,
            # and an endless one must not be waited for).
            return response.status
