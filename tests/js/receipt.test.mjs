// A receipt counts only when signed by the server key valid at its time (static/talekeeper/receipt.js),
// under Node's own test runner.
import { test } from "node:test";
import assert from "node:assert/strict";

import { jcs, utf8 } from "../../static/talekeeper/chain.js";
import { receiptSigned } from "../../static/talekeeper/receipt.js";
import * as ed25519 from "../../static/talekeeper/vendor/noble-ed25519/index.js";

const b64 = (bytes) => Buffer.from(bytes).toString("base64");
const secretA = new Uint8Array(32).fill(1);
const secretB = new Uint8Array(32).fill(2);
const publicA = b64(ed25519.getPublicKey(secretA));
const publicB = b64(ed25519.getPublicKey(secretB));

function receipt(secret, fields = {}) {
  const c = { campaign: "torn-road", seq: 42, hash: "ab".repeat(32), created_at: "2026-03-01T19:42:07.123456+00:00", ...fields };
  const message = utf8(jcs({ campaign: c.campaign, seq: c.seq, hash: c.hash, created_at: c.created_at }));
  return { ...c, signature: b64(ed25519.sign(message, secret)) };
}

test("a receipt signed by the server's one key", () => {
  assert.equal(receiptSigned(receipt(secretA), { public_key: publicA }), true);
  assert.equal(receiptSigned(receipt(secretB), { public_key: publicA }), false);
});

test("a receipt whose contents changed after signing is not signed", () => {
  const good = receipt(secretA);
  assert.equal(receiptSigned({ ...good, seq: 43 }, { public_key: publicA }), false);
  assert.equal(receiptSigned({ ...good, hash: "cd".repeat(32) }, { public_key: publicA }), false);
  assert.equal(receiptSigned({ ...good, signature: "not base64 at all!" }, { public_key: publicA }), false);
});

test("a rotated key signs only within its validity", () => {
  const key = { keys: [
    { public_key: publicA, valid_from: null, valid_until: "2026-02-01T00:00:00.000000+00:00" },
    { public_key: publicB, valid_from: "2026-02-01T00:00:00.000000+00:00", valid_until: null },
  ] };
  assert.equal(receiptSigned(receipt(secretB), key), true);
  assert.equal(receiptSigned(receipt(secretA), key), false); // the old key, after it was retired
  assert.equal(receiptSigned(receipt(secretA, { created_at: "2026-01-15T10:00:00.000000+00:00" }), key), true);
  assert.equal(receiptSigned(receipt(secretB, { created_at: "2026-01-15T10:00:00.000000+00:00" }), key), false);
  assert.equal(receiptSigned({ ...receipt(secretB), created_at: undefined }, key), false);
});
