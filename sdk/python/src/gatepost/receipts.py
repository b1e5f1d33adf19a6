"""Verifying Gatepost's signed delivery receipts, with no call to Gatepost (docs/receipts.md): a
receipt is a compact JWS (EdDSA over Ed25519) checked against the operator's JWK Set
(``/.well-known/jwks.json``, or ``Gatepost.get_jwks()``). The standard library has no Ed25519,
so the signature is checked with ``cryptography``.

A tenant's receipts form a chain: receipt n carries ``seq: n`` and ``prev``, the lowercase hex
SHA-256 of the payload bytes of receipt n-1 (None on the first). verify_receipt_chain checks the
links, so a receipt changed, deleted from the middle, or moved is found.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import Any, Literal, Mapping, Optional, Sequence, cast

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .errors import GatepostError

RECEIPT_TYP = "gatepost-receipt+jws"

ReceiptFailure = Literal[
    "malformed", "unknown_key", "invalid_signature", "tenant_mismatch", "out_of_order", "sequence_gap", "chain_broken"
]

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")


class ReceiptVerificationError(GatepostError):
    def __init__(self, reason: ReceiptFailure, message: str, index: Optional[int] = None) -> None:
        super().__init__(message)
        self.reason = reason
        #: In a chain: the position of the receipt that failed.
        self.index = index


def _b64url(part: str) -> bytes:
    if not _B64URL.match(part):
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def receipt_hash(jws: str) -> str:
    """The chain hash of a receipt: lowercase hex SHA-256 of its payload bytes."""
    parts = jws.split(".")
    return hashlib.sha256(_b64url(parts[1] if len(parts) > 1 else "")).hexdigest()


def _key(jwks: Mapping[str, Any], kid: Any) -> Ed25519PublicKey:
    keys = [
        k
        for k in jwks.get("keys", [])
        if isinstance(k, Mapping)
        and k.get("kid") == kid
        and k.get("kty") == "OKP"
        and k.get("crv") == "Ed25519"
        and k.get("alg", "EdDSA") == "EdDSA"
    ]
    if len(keys) != 1:
        raise ReceiptVerificationError("unknown_key", "The receipt names no single key of the JWK Set.")
    try:
        return Ed25519PublicKey.from_public_bytes(_b64url(str(keys[0].get("x", ""))))
    except ValueError:
        raise ReceiptVerificationError("unknown_key", "The JWK Set's key is not an Ed25519 public key.") from None


def _claims_of(payload: bytes) -> dict[str, Any]:
    try:
        claims: Any = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ReceiptVerificationError("malformed", "The receipt payload is not JSON.") from None
    seq = claims.get("seq") if isinstance(claims, dict) else None
    prev = claims.get("prev") if isinstance(claims, dict) else None
    ok = (
        isinstance(claims, dict)
        and isinstance(claims.get("id"), str)
        and claims["id"].startswith("rcp_")
        and isinstance(claims.get("tenant_id"), str)
        and isinstance(seq, int)
        and not isinstance(seq, bool)
        and seq >= 1
        and (prev is None or (isinstance(prev, str) and _HEX64.match(prev) is not None))
        and (seq == 1) == (prev is None)
        and isinstance(claims.get("sha256"), str)
        and _HEX64.match(claims["sha256"]) is not None
    )
    if not ok:
        raise ReceiptVerificationError("malformed", "The receipt payload does not have the fields of a receipt.")
    return cast(dict[str, Any], claims)


def verify_receipt(jws: str, jwks: Mapping[str, Any]) -> dict[str, Any]:
    """Checks a receipt's signature against the JWK Set and answers its claims.

    Raises ReceiptVerificationError (with a ``reason``) when it is not a receipt, names no key of
    the set, or its signature does not match.
    """
    parts = jws.split(".") if isinstance(jws, str) else []
    if len(parts) != 3:
        raise ReceiptVerificationError("malformed", "Not a receipt: a compact JWS has three parts.")
    try:
        header = json.loads(_b64url(parts[0]))
        payload, signature = _b64url(parts[1]), _b64url(parts[2])
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ReceiptVerificationError("malformed", "Not a receipt: a part is not base64url JSON.") from None
    if not isinstance(header, dict) or header.get("alg") != "EdDSA":
        raise ReceiptVerificationError("malformed", 'Not a receipt: its alg is not "EdDSA".')
    key = _key(jwks, header.get("kid"))
    try:
        key.verify(signature, f"{parts[0]}.{parts[1]}".encode("ascii"))
    except InvalidSignature:
        raise ReceiptVerificationError("invalid_signature", "The receipt signature does not match.") from None
    if header.get("typ") != RECEIPT_TYP:
        raise ReceiptVerificationError("malformed", f'Not a receipt: its typ is not "{RECEIPT_TYP}".')
    return _claims_of(payload)


def verify_receipt_chain(receipts: Sequence[str], jwks: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Verifies each receipt and the links between them: one tenant's, in order of ``seq``,
    consecutive, each ``prev`` the hash of the one before. Answers the claims, in order."""
    out: list[dict[str, Any]] = []
    for i, jws in enumerate(receipts):
        try:
            claims = verify_receipt(jws, jwks)
        except ReceiptVerificationError as e:
            raise ReceiptVerificationError(e.reason, f"Receipt {i}: {e}", i) from None
        if out:
            before = out[-1]
            if claims["tenant_id"] != before["tenant_id"]:
                raise ReceiptVerificationError("tenant_mismatch", f"Receipt {i} is of another tenant than receipt {i - 1}.", i)
            if claims["seq"] <= before["seq"]:
                raise ReceiptVerificationError(
                    "out_of_order", f"Receipt {i} (seq {claims['seq']}) comes after seq {before['seq']}.", i
                )
            if claims["seq"] != before["seq"] + 1:
                missing = claims["seq"] - before["seq"] - 1
                raise ReceiptVerificationError(
                    "sequence_gap",
                    f"{missing} receipt{'' if missing == 1 else 's'} missing between seq {before['seq']} and seq {claims['seq']}.",
                    i,
                )
            if claims["prev"] != receipt_hash(receipts[i - 1]):
                raise ReceiptVerificationError("chain_broken", f"Receipt {i} does not link to receipt {i - 1}.", i)
        out.append(claims)
    return out
