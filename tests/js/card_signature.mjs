// Checks an agent's card signature with the official JavaScript SDK's own verifier
// (@a2a-js/sdk's verifyAgentCardSignature, on `jose`): the card fetched with the SDK's
// card resolver, as a client of the SDK gets it, and each signature's key taken from
// the key set its protected header names (`jku`).
//
//     node card_signature.mjs BASE_URL [tamper]
//
// Prints `VERIFIED` when a signature verifies, else `REFUSED <why>`; with `tamper`,
// the card's name is changed after fetching it (the check must then refuse).

import { verifyAgentCardSignature } from '@a2a-js/sdk';
import { DefaultAgentCardResolver } from '@a2a-js/sdk/client';

const [base, mode] = process.argv.slice(2);
const card = await new DefaultAgentCardResolver().resolve(base);
if (mode === 'tamper') card.name = `${card.name} (changed)`;
const verify = verifyAgentCardSignature(async (kid, jku) => {
  const set = await (await fetch(jku)).json();
  const key = set.keys.find((k) => k.kid === kid);
  if (!key) throw new Error(`no key ${kid} at ${jku}`);
  return key;
});
try {
  await verify(card);
  console.log('VERIFIED');
} catch (e) {
  console.log(`REFUSED ${e.message}`);
}
