"""What a Web Push carries: the browser's keys checked, the payload encrypted for that browser alone
(RFC 8291, aes128gcm) and signed by the server's VAPID key (RFC 8292, `Authorization: vapid t=…, k=…`)."""

from __future__ import annotations

import base64
import binascii
import time
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dotfight.server.push_endpoint import Target

P256_POINT_BYTES = 65  # an uncompressed point: 0x04, x, y
AUTH_SECRET_BYTES = 16  # RFC 8291's authentication secret
# How long a VAPID signature is good for (RFC 8292 allows at most 24 hours).
VAPID_LIFETIME_S = 12 * 3600


class BadKeys(ValueError):
    """A subscription's keys cannot be encrypted to (not base64url, or not a P-256 point and 16 bytes)."""


def unb64url(text: str) -> bytes:
    """Decodes base64url with or without padding; raises BadKeys."""
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError) as error:
        raise BadKeys("not base64url") from error


def receiver_key(p256dh: str) -> bytes:
    """Returns the browser's public key (`p256dh`) as a P-256 point, refusing (BadKeys) anything else:
    a key off the curve would fail at every push.

    >>> receiver_key("BA" + "A" * 85)
    Traceback (most recent call last):
    ...
    dotfight.server.push_message.BadKeys: p256dh is not a P-256 public key
    """
    from cryptography.hazmat.primitives.asymmetric import ec

    point = unb64url(p256dh)
    if len(point) != P256_POINT_BYTES or point[0] != 4:
        raise BadKeys("p256dh is not an uncompressed P-256 point (65 bytes)")
    try:
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    except ValueError as error:
        raise BadKeys("p256dh is not a P-256 public key") from error
    return point


def auth_secret(auth: str) -> bytes:
    """Returns the subscription's authentication secret, refusing (BadKeys) one that is not 16 bytes."""
    secret = unb64url(auth)
    if len(secret) != AUTH_SECRET_BYTES:
        raise BadKeys("auth is not a 16-byte secret")
    return secret


@dataclass(frozen=True)
class VapidKeys:
    """The server's VAPID key pair: the private key in PEM, the public key as browsers want it."""

    private_pem: str
    public_key: str  # base64url of the uncompressed P-256 point: the applicationServerKey

    @classmethod
    def make(cls) -> VapidKeys:
        """Makes a new key pair."""
        from cryptography.hazmat.primitives import serialization
        from py_vapid import Vapid02

        vapid = Vapid02()
        vapid.generate_keys()
        point = vapid.public_key.public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        public = base64.urlsafe_b64encode(point).rstrip(b"=").decode("ascii")
        return cls(private_pem=vapid.private_pem().decode("ascii"), public_key=public)

    @cached_property
    def signer(self) -> Any:
        """The key as py_vapid signs with it (RFC 8292)."""
        from py_vapid import Vapid02

        return Vapid02.from_pem(self.private_pem.encode("ascii"))

    def authorization(self, origin: str, subject: str) -> dict[str, str]:
        """Returns the `Authorization` header for a push to a push service: its origin as the audience,
        the contact, an expiry."""
        claims = {
            "aud": origin,
            "sub": subject,
            "exp": int(time.time()) + VAPID_LIFETIME_S,
        }
        signed: dict[str, str] = self.signer.sign(claims)
        return {"Authorization": signed["Authorization"]}


def encrypt(data: bytes, p256dh: str, auth: str) -> bytes:
    """Encrypts a payload for one browser (aes128gcm, a new ephemeral key each time); raises BadKeys."""
    import http_ece
    from cryptography.hazmat.primitives.asymmetric import ec

    ephemeral = ec.generate_private_key(ec.SECP256R1())
    body: bytes = http_ece.encrypt(
        data,
        private_key=ephemeral,
        dh=receiver_key(p256dh),
        auth_secret=auth_secret(auth),
        version="aes128gcm",
    )
    return body


@dataclass(frozen=True)
class PushMessage:
    """One push ready to post: the encrypted body and its headers."""

    body: bytes
    headers: dict[str, str]


def push_message(
    keys: VapidKeys,
    target: Target,
    p256dh: str,
    auth: str,
    data: bytes,
    *,
    subject: str,
    ttl: int,
    topic: str,
) -> PushMessage:
    """Encrypts and signs one push to a checked endpoint (CPU work: run it off the event loop); raises
    BadKeys."""
    headers = {
        **keys.authorization(target.origin, subject),
        "Content-Encoding": "aes128gcm",
        "Content-Type": "application/octet-stream",
        "TTL": str(ttl),
        # A newer push of the same page replaces one the phone has not fetched yet.
        "Topic": topic,
        "Urgency": "normal",
    }
    return PushMessage(encrypt(data, p256dh, auth), headers)
