// The anchor line: a log's head at a session's end, short enough for a group to paste into its own chat
// (docs/fair-dice.md, "Anchors"). Anyone holding one can later check that the log still passes through it.
//
//   Talekeeper <campaign slug> #<seq> <the first 24 hex digits of the hash at seq, in groups of 4>
//   Talekeeper torn-road #42 3f2a 91bc 0d4e 7a21 5c9e 0b13

export const ANCHOR_HEX = 24;

export function anchorLine(slug, seq, hash) {
  return `Talekeeper ${slug} #${seq} ${hash.slice(0, ANCHOR_HEX).match(/.{4}/g).join(" ")}`;
}

/** {slug, seq, prefix} of a pasted line, or null when it is not one. Lenient about what a chat app does to
 *  it: surrounding quotes or backticks, runs of spaces, the hex's case and grouping. */
export function parseAnchor(text) {
  const line = (text || "").trim().replace(/^["'`\u201c\u201d]+|["'`\u201c\u201d]+$/g, "").replace(/\s+/g, " ").trim();
  const m = /^talekeeper (\S+) #(\d+) ([0-9a-f ]+)$/i.exec(line);
  const hex = m ? m[3].replace(/ /g, "").toLowerCase() : "";
  if (!m || hex.length !== ANCHOR_HEX) return null;
  return { slug: m[1], seq: Number(m[2]), prefix: hex };
}

/** Why the log does not pass through the anchor ("" when it does): `events` from #1, as read. */
export function anchorProblem(anchor, slug, events) {
  if (anchor.slug !== slug) return `This anchor is for campaign ${anchor.slug}, not ${slug}.`;
  const ev = events[anchor.seq - 1];
  if (!ev || ev.seq !== anchor.seq) {
    return `The log ends at #${events.length} but the anchor covers #${anchor.seq}: events ${events.length + 1}..${anchor.seq} are missing, as after a restore from an older backup.`;
  }
  if (!ev.hash.startsWith(anchor.prefix)) return `The log was rewritten up to #${anchor.seq}: its hash there is not the anchor's.`;
  return "";
}
