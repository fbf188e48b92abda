"""Checks an agent's card signature with the official Python SDK 1.x's own verifier
(a2a-sdk's `create_signature_verifier`, on PyJWT): the card fetched with the SDK's
card resolver, which runs the verifier on the card as it parsed it, each signature's
key taken from the key set its protected header names (`jku`).

    python sdk1_card_signature.py BASE_URL [tamper]

Prints `VERIFIED` when a signature verifies, else `REFUSED <why>`; with `tamper`, the
card's name is changed after parsing (the check must then refuse).
"""

import asyncio
import sys

import httpx
from jwt import PyJWK

from a2a.client import A2ACardResolver
from a2a.utils.signing import SignatureVerificationError, create_signature_verifier


def key_provider(kid, jku):
    keys = httpx.get(jku).json()["keys"]
    return PyJWK([k for k in keys if k.get("kid") == kid][0])


async def main() -> None:
    base, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
    verifier = create_signature_verifier(key_provider, ["ES256", "EdDSA", "RS256"])

    def check(card):
        if mode == "tamper":
            card.name = card.name + " (changed)"
        verifier(card)

    async with httpx.AsyncClient() as http:
        try:
            await A2ACardResolver(http, base).get_agent_card(signature_verifier=check)
            print("VERIFIED")
        except SignatureVerificationError as e:
            print(f"REFUSED {e}")


asyncio.run(main())
