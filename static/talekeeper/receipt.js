// Receipts: checkpoints of the log's head the server signs (campaign/checkpoints.py), checked
// against the server key that was valid when each was signed. The verification page reads them.

import { jcs, utf8 } from "./chain.js"; // chain.js also gives noble-ed25519 its synchronous SHA-512
import * as ed25519 from "./vendor/noble-ed25519/index.js";

const fromBase64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

function signedBy(checkpoint, publicKeyB64) {
  try {
    const message = utf8(jcs({ campaign: checkpoint.campaign, seq: checkpoint.seq, hash: checkpoint.hash, created_at: checkpoint.created_at }));
    return ed25519.verify(fromBase64(checkpoint.signature), message, fromBase64(publicKeyB64));
  } catch {
    return false;
  }
}

/** Whether a checkpoint's Ed25519 signature is by the server key that was valid at its `created_at`
 * (noble-ed25519: works on http too). `key` is `GET /api/key`'s answer: its `keys` with their
 * validity (timestamps of one form, so compared as strings), or only `public_key`, valid always. */
export function receiptSigned(checkpoint, key) {
  const at = checkpoint.created_at;
  const keys = Array.isArray(key.keys) ? key.keys : [{ public_key: key.public_key, valid_from: null, valid_until: null }];
  return typeof at === "string" && keys.some((k) => (k.valid_from == null || k.valid_from <= at)
    && (k.valid_until == null || at < k.valid_until) && signedBy(checkpoint, k.public_key));
}
