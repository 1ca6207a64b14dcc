// The anchor line: a log's head at a session's end, short enough for a group to paste into its own chat
// (docs/fair-dice.md, "Anchors"). Anyone holding one can later check that the log still passes through it.
//
//   Talekeeper <campaign slug> #<seq> <the first 24 hex digits of the hash at seq, in groups of 4>
//   Talekeeper torn-road #42 3f2a 91bc 0d4e 7a21 5c9e 0b13

export const ANCHOR_HEX = 24;

export function anchorLine(slug, seq, hash) {
  return `Talekeeper ${slug} #${seq} ${hash.slice(0, ANCHOR_HEX).match(/.{4}/g).join(" ")}`;
}

/** {slug, seq, prefix} of a pasted line (spaces and case forgiven), or null when it is not one. */
export function parseAnchor(text) {
  const m = /^\s*Talekeeper\s+(\S+)\s+#(\d+)\s+((?:[0-9a-fA-F]{4}\s*){6})\s*$/.exec(text || "");
  if (!m) return null;
  return { slug: m[1], seq: Number(m[2]), prefix: m[3].replace(/\s+/g, "").toLowerCase() };
}

/** Why the log does not pass through the anchor ("" when it does): `events` from #1, as read. */
export function anchorProblem(anchor, slug, events) {
  if (anchor.slug !== slug) return `That line anchors the campaign "${anchor.slug}", not this one (${slug}).`;
  const ev = events[anchor.seq - 1];
  if (!ev || ev.seq !== anchor.seq) return `The log has no #${anchor.seq} any more: it ends at #${events.length}.`;
  if (!ev.hash.startsWith(anchor.prefix)) {
    return `At #${anchor.seq} the log's hash is ${anchorLine(slug, ev.seq, ev.hash).split(" ").slice(3).join(" ")}, not the anchor's: the log was rewritten since.`;
  }
  return "";
}
