// What the acting member is told of what they did: the notice line under the sheet (a refusal, "the
// table is busy"), the result card beside the sheet's actions, and the way to a line in the log.
//
// Owns the card: which command's result it waits for, which it shows, whether it was dismissed.

import { h, fill } from "./ui.js";
import { describe, visibilityBadge } from "./describe.js";
import { keptNote } from "./format.js";
import { state } from "./state.js";

const noticeEl = document.getElementById("notice");
const resultEl = document.getElementById("result");
const resultWanted = new Map(); // seq -> "card" | "log": the newest event of a command this page sent
let resultKept = null; // why the shown result is more hidden than its command asked (keptNote)
let resultSeq = null;
let resultDismissed = false; // its ✕: a result dismissed stays so, whichever tab is shown

export function notice(message, tone = "error") {
  noticeEl.textContent = message || "";
  noticeEl.dataset.tone = tone;
}

export function expectResult(seqs, show, asked) {
  const seq = Math.max(...seqs);
  resultWanted.set(seq, { show, asked });
  if (state.events.has(seq)) showResult(seq);
}

// A line just shown: the result this page waited for, if it is one.
export function resultArrived(seq) {
  if (resultWanted.has(seq)) showResult(seq);
}

// A witnessed roll decided in `seq` (./witnessing.js): the card waiting for, or showing, its pending
// event (or its call to witnesses) shows the decision instead.
export function resultDecided(roll, seq) {
  const ofRoll = (s) => s === roll || state.events.get(s)?.payload?.command_of === roll;
  for (const [wanted, how] of [...resultWanted]) {
    if (ofRoll(wanted)) { resultWanted.delete(wanted); resultWanted.set(seq, how); }
  }
  if (resultSeq !== null && resultSeq !== seq && ofRoll(resultSeq)) { resultSeq = seq; renderResult(); }
}

// A line changed (voided): the card redrawn if it shows that line.
export function resultChanged(seq) {
  if (seq === resultSeq) renderResult();
}

export function inView(el) {
  const box = el.getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight;
}

function showResult(seq) {
  const { show, asked } = resultWanted.get(seq);
  resultWanted.delete(seq);
  const li = document.getElementById(`seq-${seq}`);
  const ev = state.events.get(seq);
  const kept = keptNote(ev, asked, { isGM: state.isGM, username: state.me.username, char: state.chars.get(ev.character) });
  if (show === "log") {
    if (kept) notice(kept, "info");
    else if (noticeEl.dataset.tone === "info") notice(""); // an earlier command's note, not this one's
    if (li && !inView(li)) li.scrollIntoView({ block: "nearest" });
    return;
  }
  resultSeq = seq;
  resultKept = kept;
  resultDismissed = false;
  renderResult();
  // Once the form has closed: the card no longer sticks (talekeeper.css .dock), so it is brought into
  // view where it stands, under the sheet, after the page has laid out without the form.
  requestAnimationFrame(() => { if (!resultEl.hidden && !inView(resultEl)) resultEl.scrollIntoView({ block: "nearest" }); });
}

// The card belongs to the character it was rolled for (docs/table.md): it shows under that
// character's sheet only, so another tab never shows it as if it were that sheet's result.
export function renderResult() {
  const ev = state.events.get(resultSeq);
  if (!ev || resultDismissed || (ev.character != null && ev.character !== state.selected)) { resultEl.hidden = true; return; }
  const d = describe(ev);
  fill(document.getElementById("result-body"),
    h("div", { class: "ev-head" }, h("strong", { class: "who" }, ev.character_name || ev.actor || ""), visibilityBadge(ev),
      ev.voided ? h("span", { class: "badge void" }, "voided") : null, h("span", { class: "spacer" }),
      h("a", { href: `#seq-${ev.seq}`, class: "small", onclick: (e) => { e.preventDefault(); showInLog(ev.seq); } }, `#${ev.seq} in the log`),
      h("button", { type: "button", class: "small ghost", "aria-label": "Dismiss the result", onclick: () => { resultDismissed = true; resultEl.hidden = true; } }, "✕")),
    h("div", { class: "ev-body" },
      h("span", { class: "what" }, d.text),
      d.dice && d.dice.length ? h("span", { class: "dice" }, d.dice) : null,
      d.outcome ? h("span", { class: `outcome ${d.outcome.tone || ""}` }, d.outcome.label) : null),
    resultKept ? h("p", { class: "muted small kept" }, resultKept) : null,
    document.getElementById(`seq-${ev.seq}`)?.querySelector(".ev-follow:not([hidden])")
      ? h("p", { class: "muted small" }, "What you can do next is on ", h("a", { href: `#seq-${ev.seq}`, onclick: (e) => { e.preventDefault(); showInLog(ev.seq); } }, "the roll in the log"), ".") : null);
  resultEl.hidden = false;
}

export function showInLog(seq) {
  const li = document.getElementById(`seq-${seq}`);
  if (!li) return;
  li.scrollIntoView({ block: "nearest" });
  li.tabIndex = -1;
  li.focus({ preventScroll: true });
}
