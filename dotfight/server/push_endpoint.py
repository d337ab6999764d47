"""Where a Web Push may be sent: a browser's endpoint URL checked, its host resolved once and every address
it names checked to be on the public internet, so that nobody can point the server at its own network.

The check runs when a browser subscribes and again before every delivery (a name may resolve elsewhere
by then: DNS rebinding); the delivery then connects to the addresses this check returned, never looking
the name up a second time (`push_sender.py`). Addresses are read the way the socket layer reads them
(`getaddrinfo`: `127.1`, `0x7f.0.0.1`, `0177.0.0.1` and `2130706433` are all 127.0.0.1) and judged
with `ipaddress`, with the IPv4 address inside IPv4-mapped, NAT64, 6to4 and IPv4-compatible IPv6
addresses judged too.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# Resolves (host, port) to the addresses the socket layer would connect to; raises OSError when it cannot.
Lookup = Callable[[str, int], Sequence[str]]

HTTPS_PORT = 443
# Special-use names (RFC 6761, 6762, 8375, 9476 and ICANN's .internal) never name a push service.
SPECIAL_NAMES = ("localhost", "local", "test", "example", "invalid", "internal", "home.arpa", "onion", "alt")
HOST_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")
# NAT64 prefixes (RFC 6052, 8215): the IPv4 address in the last 32 bits is where the packets end up.
NAT64_NETWORKS = (ipaddress.IPv6Network("64:ff9b::/96"), ipaddress.IPv6Network("64:ff9b:1::/48"))
# IPv4-compatible addresses (deprecated, RFC 4291), `::` and `::1` among them.
IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
# Name lookups that say the name does not exist (the endpoint is wrong), not that DNS failed for now.
NO_SUCH_NAME = frozenset(
    code for code in (getattr(socket, "EAI_NONAME", None), getattr(socket, "EAI_NODATA", None)) if code
)


class EndpointRefused(ValueError):
    """The endpoint is not one the server posts to (a bad URL, a local name or a non-public address)."""


class EndpointUnresolved(OSError):
    """The endpoint's host could not be resolved now (`missing`: the name does not exist at all)."""

    def __init__(self, message: str, *, missing: bool) -> None:
        super().__init__(errno.EHOSTUNREACH, message)
        self.missing = missing


@dataclass(frozen=True)
class EndpointPolicy:
    """What endpoints are allowed: https on port 443 to a public named host, of the allow-list if there
    is one; `insecure` (tests only) also allows plain http, any port, and loopback addresses."""

    insecure: bool = False
    allowed_hosts: tuple[str, ...] = ()

    def allows_host(self, host: str) -> bool:
        """Tells whether a host is on the allow-list (`*.example.com` allows its subdomains); any host is
        allowed when the list is empty."""
        if not self.allowed_hosts:
            return True
        for allowed in self.allowed_hosts:
            allowed = allowed.lower().rstrip(".")
            if allowed.startswith("*."):
                if host.endswith(allowed[1:]):
                    return True
            elif host == allowed:
                return True
        return False

    def allows_address(self, address: Address) -> bool:
        """Tells whether the server may connect to an address: public, or loopback when insecure."""
        if self.insecure and address.is_loopback:
            return True
        return is_public(address)


@dataclass(frozen=True)
class Target:
    """A checked endpoint: its URL, its host (lower case, without a trailing dot) and port."""

    url: str
    scheme: str
    host: str
    port: int
    numeric: bool  # the host is an address literal (in any spelling the socket layer reads)

    @property
    def origin(self) -> str:
        """The push service's origin (`https://host[:port]`), the audience of the VAPID signature."""
        default = HTTPS_PORT if self.scheme == "https" else 80
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}" + ("" if self.port == default else f":{self.port}")


def is_public(address: Address) -> bool:
    """Tells whether an address is on the public internet: globally routable, not multicast nor
    reserved, and, for IPv6 carrying an IPv4 address, that one public too.

    >>> [is_public(ipaddress.ip_address(a)) for a in ("8.8.8.8", "127.0.0.1", "10.1.2.3", "100.64.0.1")]
    [True, False, False, False]
    >>> [is_public(ipaddress.ip_address(a)) for a in ("224.0.0.1", "::ffff:127.0.0.1", "64:ff9b::7f00:1")]
    [False, False, False]
    >>> [is_public(ipaddress.ip_address(a)) for a in ("2002:7f00:1::", "2001:4860:4860::8888", "fe80::1")]
    [False, True, False]
    """
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None or address in IPV4_COMPATIBLE:
            return False  # an IPv4 socket in disguise, or unused space: no push service is there
        carried = address.sixtofour
        if carried is None and any(address in network for network in NAT64_NETWORKS):
            carried = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if carried is not None and not is_public(carried):
            return False
    return address.is_global and not address.is_multicast and not address.is_reserved


def numeric_address(host: str) -> Address | None:
    """Returns the address a host names when it is an address literal as the socket layer reads it
    (without any lookup), else None.

    >>> [str(numeric_address(h)) for h in ("127.1", "0x7f.0.0.1", "0177.0.0.1", "0.0", "::1", "a.b")]
    ['127.0.0.1', '127.0.0.1', '127.0.0.1', '0.0.0.0', '::1', 'None']
    """
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError, ValueError):
        return None
    return ipaddress.ip_address(str(found[0][4][0]).split("%", 1)[0])


def _refuse(why: str) -> EndpointRefused:
    return EndpointRefused(f"a push endpoint must be an https URL of a push service ({why})")


def _split(endpoint: str) -> tuple[SplitResult, str, int | None]:
    """Splits a URL, refusing what `urlsplit` refuses (e.g. `https://[zz]/`) as a bad endpoint."""
    if not endpoint.isascii() or not endpoint.isprintable() or " " in endpoint:
        raise _refuse("plain ASCII without spaces")
    try:
        parts = urlsplit(endpoint)
        return parts, parts.hostname or "", parts.port
    except ValueError as error:  # a bad [IPv6] host, a port that is not a number or out of range
        raise _refuse("not a valid URL") from error


def parse_endpoint(endpoint: str, policy: EndpointPolicy) -> Target:
    """Checks an endpoint URL without looking anything up; raises EndpointRefused.

    >>> parse_endpoint("https://fcm.googleapis.com/fcm/send/abc", EndpointPolicy()).port
    443
    >>> parse_endpoint("https://127.1/", EndpointPolicy())
    Traceback (most recent call last):
    ...
    dotfight.server.push_endpoint.EndpointRefused: a push endpoint must be ... (a bare address)
    """
    parts, host, port = _split(endpoint)
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]  # a fully qualified name: the same host
    if not host or host.endswith("."):
        raise _refuse("no host")
    if parts.username is not None or parts.password is not None:
        raise _refuse("no user name or password")
    schemes = ("https", "http") if policy.insecure else ("https",)
    if parts.scheme not in schemes:
        raise _refuse("https only")
    default_port = HTTPS_PORT if parts.scheme == "https" else 80
    port = default_port if port is None else port
    if port != HTTPS_PORT and not policy.insecure:
        raise _refuse("port 443 only")
    address = numeric_address(host)
    if address is not None:
        if not policy.insecure:
            raise _refuse("a bare address")  # push services are named hosts; an address is someone's machine
        if not policy.allows_address(address):
            raise _refuse("not a public address")
    elif not HOST_NAME.fullmatch(host):
        raise _refuse(
            "a host name of letters, digits, hyphens and dots"
        )  # no %-escapes for a URL parser to undo
    elif not policy.insecure and (
        "." not in host or any(host == name or host.endswith("." + name) for name in SPECIAL_NAMES)
    ):
        # Local names (with `insecure`, tests may use `localhost`: the lookup's check still holds).
        raise _refuse("not a public host name")
    if not policy.allows_host(host):
        raise _refuse("not a push service this server sends to")
    return Target(parts.geturl(), parts.scheme, host, port, numeric=address is not None)


def system_lookup(host: str, port: int) -> list[str]:
    """Resolves a host as the socket layer does (`getaddrinfo`, TCP); returns the addresses in its order."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(entry[4][0]) for entry in found]


Resolve = Callable[[Target], Awaitable[tuple[str, ...]]]


def resolver(policy: EndpointPolicy, threads: Executor | None, timeout: float) -> Resolve:
    """Returns a function that resolves a target once (in `threads`, within `timeout` seconds) and returns
    its addresses, each checked against the policy: EndpointRefused if any is not allowed (a name that
    points at one private address among public ones is not a push service), EndpointUnresolved when
    the lookup fails or takes too long."""

    async def resolve(target: Target) -> tuple[str, ...]:
        loop = asyncio.get_running_loop()
        lookup: Lookup = system_lookup  # read at call time, so tests can stand in for DNS
        try:
            async with asyncio.timeout(timeout):
                found = await loop.run_in_executor(threads, lookup, target.host, target.port)
        except TimeoutError as error:
            raise EndpointUnresolved(f"resolving {target.host} took too long", missing=False) from error
        except socket.gaierror as error:
            missing = error.errno in NO_SUCH_NAME
            raise EndpointUnresolved(f"{target.host} does not resolve: {error}", missing=missing) from error
        except (OSError, UnicodeError) as error:
            raise EndpointUnresolved(f"{target.host} does not resolve: {error}", missing=False) from error
        addresses: list[str] = []
        for text in found:
            try:
                address = ipaddress.ip_address(text.split("%", 1)[0])
            except ValueError as error:
                raise _refuse("an address the server cannot read") from error
            if not policy.allows_address(address):
                raise _refuse("its host resolves to an address that is not public")
            if str(address) not in addresses:
                addresses.append(str(address))
        if not addresses:
            raise EndpointUnresolved(f"{target.host} resolves to nothing", missing=True)
        return tuple(addresses)

    return resolve
