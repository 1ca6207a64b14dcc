// The table's side of signed commands (docs/fair-dice.md, "Signed commands"): this device's key signs
// every command the page sends, each event is checked as a member's command (./signed.js) as the chain
// checks it, every event line carries the verdict as a small mark, and each session's end offers the
// anchor line a group pastes into its own chat.
//
// The session and commitment a command is signed with are the newest this page knows: the page's
// start, then the session_started and session_ended events as they are checked, then a stale_session
// refusal's. The command id is drawn after them, so the seed was committed before the id existed: no
// host can choose a seed for a command it has seen (a refused one is signed again under a NEW id).

import { CommandCheck, ENDORSE_KEY, KEY_ADDED, SIGNING_REQUIRED, UNVOUCHED } from "./signed.js";
import { Registration, campaignKeys, knownKeys, signCommand, staleNow } from "./keys.js";
import { recomputeHash } from "./chain.js";
import { anchorLine } from "./anchor.js";
import { h } from "./ui.js";

export function setUpTrust({ data, csrf, notice, report }) {
  const me = data.me.username;
  // false where the members do not sign (yet): the GM's switch, checked as it arrives, turns it on.
  let signing = data.signing !== false;
  let where = { session: data.session ?? null, commitment: data.commitment ?? null };
  const check = new CommandCheck(data.campaignId);
  const verdicts = new Map(); // seq -> {state, problems}
  let primed = null;
  let firstChecked = null;

  async function post(envelope) {
    const res = await fetch(`/api/campaigns/${encodeURIComponent(data.slug)}/commands`, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf }, body: JSON.stringify(envelope),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw { code: "refused", message: "The server refused this device's key.", ...(json.error || {}) };
    return json;
  }
  const registration = new Registration({
    slug: data.slug, campaignId: data.campaignId, username: me, post, context: async () => where,
  });

  /** The signature object for a command about to be sent (after this device's key is registered). */
  async function sign(id, action) {
    if (!signing) return null;
    const record = await registration.ready();
    return signCommand(record, data.campaignId, where.session, where.commitment, id, action);
  }

  /** A refusal of a signed command: true when it is worth signing again (with a new id). */
  function refused(problem) {
    if (problem?.code === "stale_session") {
      const now = staleNow(problem);
      if (now) where = now;
      return !!now;
    }
    if (problem?.code === "bad_signature") registration.reset(); // the key may have been revoked elsewhere
    return false;
  }

  // --- priming: what came before the first event the page checks --------------------------------
  // The table checks its window of the log; the keys registered before it are the server's list, and
  // each one's own event is fetched and checked (its hash and its self-signature). The verification
  // page checks the whole log from #1.
  async function prime(first) {
    if (!signing) return;
    let keys = [];
    try { keys = await campaignKeys(data.slug); } catch { return; }
    const earlier = keys.filter((k) => k.added < first);
    check.prime({ signingFrom: keys.signedFrom ?? data.signingFrom ?? null, commitments: data.session ? { [data.session]: data.commitment } : {} });
    for (const k of earlier) {
      const res = await fetch(`/api/campaigns/${encodeURIComponent(data.slug)}/events?after=${k.added - 1}&limit=1`, { credentials: "same-origin" });
      const ev = res.ok ? (await res.json()).events?.[0] : null;
      const again = ev && await recomputeHash(ev, data.campaignId);
      if (!ev || ev.seq !== k.added || ev.type !== KEY_ADDED || again.hash !== ev.hash || ev.payload?.key !== k.key) {
        report(k.added, `The server lists ${k.member}'s key ${k.key.slice(0, 8)}… as added at #${k.added}, but that event does not add it.`);
        continue;
      }
      // Its self-signature, checked on its own (a session before the window has no commitment known here).
      const { problems } = await new CommandCheck(data.campaignId).check(ev);
      for (const problem of problems) report(ev.seq, problem);
      check.keys.set(k.key, { actor: ev.actor_id ?? null, member: ev.actor, label: ev.payload.label, added: ev.seq, revoked: k.revoked ?? null });
    }
    warnUnknown(keys.filter((k) => k.member === me && (k.revoked === null || k.revoked === undefined)).map((k) => k.key));
  }

  /** Called by the chain for each event, in seq order, after its hash is checked. */
  async function inspect(ev) {
    if (firstChecked === null) { firstChecked = ev.seq; primed = prime(ev.seq); }
    await primed;
    const verdict = await check.check(ev);
    const p = ev.payload || {};
    // A key added while its member held a live key, that none of hers vouched for (yet): said on its line
    // until an endorsement the page checks vouches for it (docs/fair-dice.md, "Vouching for a new key").
    if (ev.type === KEY_ADDED && check.unvouched(p.key)) verdict.unvouched = true;
    const vouched = !verdict.problems.length && p.action?.type === ENDORSE_KEY ? check.keys.get(p.action.key) : null;
    if (vouched && vouched.vouched && verdicts.get(vouched.added)?.unvouched) {
      verdicts.get(vouched.added).unvouched = false;
      showVerdict(vouched.added);
    }
    verdicts.set(ev.seq, verdict);
    showVerdict(ev.seq);
    for (const problem of verdict.problems) report(ev.seq, problem);
    if (ev.type === "session_started" && !ev.hidden) where = { session: p.session ?? ev.session ?? null, commitment: p.dice_commitment ?? null };
    if (ev.type === "session_ended" && !ev.hidden) {
      where = { session: null, commitment: null };
      showAnchor(ev);
    }
    if (ev.type === KEY_ADDED && ev.actor === me && !verdict.problems.length) warnUnknown([p.key]);
    if (ev.type === SIGNING_REQUIRED && !verdict.problems.length) signing = true;
  }

  // --- marks on the log's lines ------------------------------------------------------------------------
  const WORDS = {
    signed: ["✓", "Checked here: signed by the member's registered key for this session, and its dice are the dice rolled"],
    part: ["✓", "Checked here: part of a signed command"],
    server: ["", ""],
    unsigned: ["·", "Not signed: made before members signed their commands, so the host could have sent it in the member's name"],
    sealed: ["", ""],
    bad: ["BAD", ""],
  };

  /** The mark for an event's line (table.js puts it in the line's head; it fills in once checked). */
  function mark(seq) {
    const el = h("span", { class: "trust-mark", dataset: { seq } });
    paint(el, verdicts.get(seq));
    return el;
  }

  function paint(el, verdict) {
    if (!verdict) return;
    const [text, title] = WORDS[verdict.state];
    el.dataset.state = verdict.state;
    el.title = verdict.state === "bad" ? verdict.problems.join(" ") : title;
    el.textContent = text;
    el.setAttribute("aria-label", verdict.state === "bad" ? `BAD: ${el.title}` : title || "");
    if (verdict.unvouched && verdict.state !== "bad") {
      el.append(" ", h("span", { class: "unvouched", title: "Added while this member held a live key, and no earlier key of hers has endorsed it: a device she lost, or a key someone else added in her name. Ask her." }, UNVOUCHED));
      el.setAttribute("aria-label", `${el.getAttribute("aria-label")} ${UNVOUCHED}`.trim());
    }
  }

  function showVerdict(seq) {
    for (const el of document.querySelectorAll(`.trust-mark[data-seq="${seq}"]`)) paint(el, verdicts.get(seq));
  }

  // --- keys added in this member's name ------------------------------------------------------------
  function warnUnknown(keys) {
    const known = knownKeys(me);
    const strangers = keys.filter((k) => !known.has(k));
    if (!strangers.length) return;
    notice(`A key this device does not know was added in your name (${strangers.map((k) => `${k.slice(0, 8)}…`).join(", ")}). `
      + "On the verification page: if you added it on another device, vouch for it from here (It is mine); if not, revoke it.", "warning");
  }

  // --- the anchor line --------------------------------------------------------------------------------
  const anchorEl = document.getElementById("anchor");
  function showAnchor(ev) {
    if (!anchorEl) return;
    const line = anchorLine(data.slug, ev.seq, ev.hash);
    anchorEl.hidden = false;
    document.getElementById("anchor-line").textContent = line;
    const status = document.getElementById("anchor-status");
    status.textContent = "";
    document.getElementById("anchor-copy").onclick = async () => {
      try {
        await navigator.clipboard.writeText(line);
      } catch { // no clipboard API on plain http: select the line and copy it the old way
        const range = document.createRange();
        range.selectNodeContents(document.getElementById("anchor-line"));
        getSelection().removeAllRanges();
        getSelection().addRange(range);
        document.execCommand("copy");
      }
      status.textContent = "Copied: paste it into your group's chat.";
    };
  }

  return { sign, refused, inspect, mark, check, registration, get where() { return where; } };
}
