// Checking the log this page is shown (chain.js): every event's link and hash as it arrives, every
// reveal against its sealing, every member's signed command (trust.js), and the whole log against
// the head this browser verified on an earlier visit. A log that does not check out raises the
// alarm at the top, with its evidence to download. Also the receipts: checkpoints the server signs.
//
// Owns the alarm and the receipts' list; the checks themselves are state.chain and state.trust.

import { h, fill } from "./ui.js";
import { Chain, eventsPage, forgetHead, short } from "./chain.js";
import { postJSON } from "./commands.js";
import { minuteUTC } from "./format.js";
import { notice } from "./result.js";
import { state } from "./state.js";
import { setUpTrust } from "./trust.js";

const chainHeadEl = document.getElementById("chain-head");

// Sets state.trust and state.chain, and the alarm's and the receipts' buttons.
export function setUpLogCheck() {
  const { data, csrf, slug } = state;
  const trust = setUpTrust({ data, csrf, notice, report: (seq, message) => chain._problem("signed", seq, message) });
  const chain = new Chain({
    inspect: trust.inspect,
    slug,
    campaignId: data.campaignId,
    fetchEvents: async (after, limit) => (await eventsPage(slug, after, limit)).events,
    onProblem: showProblem,
    onHead: (head) => {
      if (!chain.problems.length) chainHeadEl.textContent = `verified to #${head.seq} · ${short(head.hash)}`;
    },
  });
  Object.assign(state, { trust, chain });
  document.getElementById("chain-evidence").addEventListener("click", () => download(`talekeeper-${slug}-evidence.json`, {
    campaign: slug,
    verified_head: chain.stored, // what this browser verified before the problem
    problems: chain.problems,
    received: [...chain.seen].map(([seq, { hash }]) => ({ seq, hash })),
  }));
  document.getElementById("chain-accept").addEventListener("click", () => {
    if (!confirm("Forget the log this browser verified and trust the server's log from now on? Only do this when "
      + "everyone at the table knows why it changed (for example, the server was restored from a backup).")) return;
    forgetHead(slug);
    location.reload();
  });
  document.getElementById("receipt-button").addEventListener("click", async (e) => {
    const err = document.getElementById("receipt-error");
    const button = e.currentTarget;
    err.textContent = "";
    button.disabled = true;
    try {
      const { ok, json } = await postJSON(`/api/campaigns/${slug}/checkpoints`, {});
      if (!ok) throw new Error(json.error?.message || "The server refused to sign a receipt.");
      chain.serverHead(json); // a receipt for a head this page saw differently is an alarm too
      download(receiptName(json), json);
      await loadReceipts();
    } catch (problem) {
      err.textContent = problem.message || "The server can't be reached.";
    } finally {
      button.disabled = false;
    }
  });
}

function showProblem(problem) {
  const { chain } = state;
  fill(document.getElementById("chain-problems"),
    ...chain.problems.map((p) => h("li", { dataset: { seq: p.seq, kind: p.kind } }, p.message)));
  document.getElementById("chain-alarm-title").textContent = chain.broken
    ? "This server's log is not the one your browser verified"
    : chain.problems.some((p) => p.kind === "command") ? "The server may have chosen your dice"
      : chain.problems.some((p) => p.kind === "signed") ? "A member's command does not check out"
      : chain.problems.some((p) => p.kind === "witness") ? "The server chose which witnesses a roll's dice hang on"
      : "Another member is shown a different log";
  document.getElementById("chain-alarm").hidden = false;
  chainHeadEl.dataset.state = "alarm";
  chainHeadEl.textContent = `log problem at #${problem.seq}`;
}

function download(name, value) {
  const url = URL.createObjectURL(new Blob([JSON.stringify(value, null, 2)], { type: "application/json" }));
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000); // after the download has started
}

const receiptName = (c) => `talekeeper-${state.slug}-receipt-${c.seq}.json`;

/** The newest receipts, newest first, as `GET .../checkpoints?order=newest` gives them. */
function renderReceipts(list) {
  fill(document.getElementById("receipt-list"), ...list.map((c) => h("li", null,
    h("span", null, `#${c.seq} · ${short(c.hash)}`),
    // UTC, as the log, the audit and the exports say every time: one clock for the whole table.
    h("time", { class: "muted", datetime: c.created_at }, minuteUTC(c.created_at)),
    h("button", { type: "button", class: "link small", "aria-label": `Download the receipt for #${c.seq}`,
      onclick: () => download(receiptName(c), c) }, "download"))));
}

export async function loadReceipts() {
  try {
    const res = await fetch(`/api/campaigns/${state.slug}/checkpoints?order=newest&limit=10`, { credentials: "same-origin" });
    if (res.ok) renderReceipts((await res.json()).checkpoints || []);
  } catch { /* offline: the list stays as it was */ }
}
