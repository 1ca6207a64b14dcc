// The live table: one socket, the log rendered in seq order, exactly once;
// the characters' sheets as their projections hold them; the actions each
// sheet allows, with exact odds before the roll; the GM's tools.
//
// The page remembers the last seq it showed; on every (re)connect it asks for
// the events after it, so a dropped socket catches up with no gap and no
// duplicate. Anything at or below the last seq shown is ignored.
//
// Every event is also checked as it arrives (./chain.js): its link and hash, every
// reveal against its sealing, and the whole log against the head this browser verified
// on an earlier visit. A log that does not check out raises the alarm at the top.
//
// Everything that depends on the rule system lives in ./systems/<name>.js
// (render a sheet, list its actions, describe its events, offer follow-ups);
// docs/table.md describes that interface.

import { h, fill, buildForm, cap, words, die, diceGroup, formatOdds, limitProblem, useVisibilities, askFirst } from "./ui.js";
import { Chain, eventsPage, forgetHead, parseJSON, short } from "./chain.js";
import { setUpEncounter } from "./encounter.js";
import { describeFight, setUpFight } from "./fight.js";
import { fitLog, focusInPanel, landOn } from "./layout.js";
import { setUpChat } from "./chat.js";
import { adjustSpec } from "./adjust.js";
import { setUpDiceBox } from "./dicebox.js";
import { setUpTrust } from "./trust.js";

const root = document.getElementById("table");
const data = JSON.parse(document.getElementById("table-data").textContent);
const slug = data.slug;
const me = data.me;
const isGM = me.role === "gm";
const isSpectator = me.role === "spectator";
const csrf = root.dataset.csrf;
const RECENT = data.recent || 200; // events shown on load; earlier ones on demand
const pageHead = Number(data.head); // sheets in `data` include every event up to here
// The system's declarations (rules/declare.py, also at /api/systems/<name>): actions with
// their fields and limits, events with their current names and one-line descriptions.
const declared = data.declared || { actions: {}, events: {}, renames: {} };
// An event stored under a former name reads under today's name. The chain is checked on
// the event exactly as stored (chain.js) before it is read this way.
const nowName = (type) => declared.renames[type] || type;
const asNow = (ev) => (declared.renames[ev.type] ? { ...ev, type: nowName(ev.type), stored_type: ev.type } : ev);
// "earned {points} points": a declared description, filled from the payload.
// Each visibility's words (campaign/models.py VISIBILITY_WORDS): the choices, the badges, their titles.
const VISIBILITIES = new Map((data.visibilities || []).map((v) => [v.value, v]));
useVisibilities(data.visibilities || []);
// What the players see of an NPC (campaign/models.py SHOWN_CHOICES): value -> words.
const SHOWN = new Map((data.shown || []).map((s) => [s.value, s.label]));
// "{rounds|round|rounds}": the count and its noun in agreement; "[: “{name}”]" only when every value in it
// is given: as rules/declare.py fill_description says them (one pass: a filled-in value is never read again).
const FILLED = /\[([^[\]]*)\]|\{(\w+)(?:\|([^|{}]*)\|([^|{}]*))?\}/g;
const fillTemplate = (template, p) => template.replace(FILLED, (_, optional, key, one, many) => {
  if (optional !== undefined) {
    const keys = [...optional.matchAll(FILLED)].map((m) => m[2]);
    return keys.every((k) => p[k] !== undefined && p[k] !== null && p[k] !== "") ? fillTemplate(optional, p) : "";
  }
  return one === undefined ? (p[key] ?? "?") : `${p[key] ?? "?"} ${p[key] === 1 ? one : many}`;
});

let system;
try {
  system = await import(data.systemModule);  // the release's own module (sessions/views.py, system_module)
} catch (problem) {
  console.warn(`No table module for ${data.system}; showing raw sheets.`, problem);
  system = await import("./systems/generic.js");
}

const logEl = document.getElementById("log");
const connEl = document.getElementById("conn");
const olderBtn = document.getElementById("older");
const reconnectBtn = document.getElementById("reconnect");
const noticeEl = document.getElementById("notice");
const composerEl = document.getElementById("composer");
const liveEl = document.getElementById("log-live");

let lastSeq = Math.max(0, pageHead - RECENT);
let firstShown = lastSeq + 1;
let socket = null;
let retry = 0;
let retryTimer = null;
let retryAt = 0; // when the next reconnect attempt starts (the offline status counts down to it)
let countdownTimer = null;
let lastFrameAt = Date.now();
let loading = true; // until the first "ready": follow-ups are worked out once, at the end of the backlog
const pending = new Map(); // client command id -> {onAck, onError}

const events = new Map(); // seq -> event as shown (revealed payloads merged in)
const charEvents = new Map(); // character id -> [seq, ...] ascending, as shown
const voidedBy = new Map(); // seq -> the event_voided event (when seen)
const revealedSeqs = new Set();
const chars = new Map(); // id -> {id, name, owner, state, seq}
for (const c of data.characters) chars.set(c.id, { ...c });
const members = new Map(data.members.map((m) => [m.username, m.role]));
let present = new Set();
let memberHeads = new Map(); // username -> the head their browser verified and reported
let session = data.session;
let scene = data.scene;
let sceneName = data.sceneName || null; // the running scene's, if the GM named it
let selected = null;
let composer = null; // {spec, charId, opener}
const lastValues = {}; // action type -> last values used, "who sees the dice" included (sticky per kind of action)

// --- commands, previews, sheets over HTTP -----------------------------------------------

// The command id is an input to the command's dice (docs/fair-dice.md): random, chosen here,
// and reused by a retry (which so gets the same dice). getRandomValues works on http too.
function newId() {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function postJSON(url, body, timeoutMs = 0) {
  const res = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
    body: JSON.stringify(body),
    signal: timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined,
  });
  const json = await res.json().catch(() => ({}));
  return { ok: res.ok, status: res.status, json };
}

// Send one command: over the socket when it is up, else over HTTP with the same id.
//
// When its outcome is in doubt (the socket dropped before the answer, the server lost its
// database at COMMIT, a 5xx or no answer at all) it is sent again with the SAME id: the server
// stores an id at most once and answers a repeat with what it stored (docs/operations.md), so a
// roll is never doubled and the player is never asked to roll again. database_unavailable is
// not a doubt: the server knows nothing was stored, and says so. table_busy is no doubt either
// (the table's lock was taken for longer than the server waits: nothing was stored), but it
// passes, so it is sent again the same way, and said as what it is. Either speaks only of the
// try it answers: once a try was in doubt, a later "nothing was stored" leaves that doubt
// standing (the first try may be stored), so the page goes on resending and never says it.
// `show`: where the acting member sees what it did: "card" (the result card beside the sheet's
// actions, kept in view) or "log" (the log line, scrolled into view: the dice box sits under the log).
const DOUBTS = new Set(["outcome_unknown", "server_error", "connection_lost", "no_answer"]);
const BUSY = "table_busy";
const RESEND_AFTER_MS = [500, 1000, 2000, 4000, 8000, 8000, 8000]; // ~30 s of asking, then say we don't know
const ANSWER_WITHIN_MS = 15000;

export async function sendCommand(action, { show } = {}) {
  let id = newId();
  let signature = await trust.sign(id, action); // waits for this device's key to be registered
  let doubted = false; // an earlier try may be stored
  for (let attempt = 0, resigned = 0; ; attempt += 1) {
    let ack;
    try {
      ack = await deliver(id, action, signature);
    } catch (problem) {
      // Signed for a session that is no longer the current one: nothing was stored; sign again under a
      // NEW id, drawn after the new commitment (an id is never sent into another session).
      if (resigned < 3 && trust.refused(problem)) {
        resigned += 1;
        id = newId();
        signature = await trust.sign(id, action);
        continue;
      }
      const busy = problem.code === BUSY;
      const notStored = busy || problem.code === "database_unavailable"; // this try, not an earlier one
      if (!DOUBTS.has(problem.code) && !busy && !(doubted && notStored)) throw problem;
      doubted = doubted || DOUBTS.has(problem.code);
      if (attempt >= RESEND_AFTER_MS.length) {
        if (!doubted) throw problem; // "nothing was stored": the server's own words
        throw { code: problem.code, message: "We couldn't confirm whether that was stored. The log will show it if it was: check it once the table is live before sending it again." };
      }
      notice(busy && !doubted ? "The table is busy finishing an earlier action; trying again…" : "Checking whether that was stored…", "info");
      await new Promise((resolve) => setTimeout(resolve, RESEND_AFTER_MS[attempt]));
      continue;
    }
    if (attempt) notice("");
    chain.ownCommand(ack.seq, id, action); // the dice keyed on the id sent, for the action sent
    if (show) expectResult(ack.seqs?.length ? ack.seqs : [ack.seq], show, action.visibility || "public");
    return ack;
  }
}

function deliver(id, action, signature) {
  const envelope = signature ? { id, action, signature } : { id, action };
  if (socket && socket.readyState === WebSocket.OPEN) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { // a late ack is dropped; the resend gets the stored answer
        pending.delete(id);
        reject({ code: "no_answer", message: "No answer from the server." });
      }, ANSWER_WITHIN_MS);
      pending.set(id, {
        onAck: (frame) => { clearTimeout(timer); resolve(frame); },
        onError: (frame) => { clearTimeout(timer); reject(frame); },
      });
      socket.send(JSON.stringify({ type: "command", ...envelope }));
    });
  }
  return postJSON(`/api/campaigns/${slug}/commands`, envelope, ANSWER_WITHIN_MS).then(({ ok, status, json }) => {
    if (ok) return { seq: json.seq, seqs: (json.events || []).map((e) => e.seq) };
    const code = json.error?.code || (status >= 500 ? "server_error" : "refused");
    throw { code, message: json.error?.message || "The server refused that; nothing was stored." };
  }, () => {
    throw { code: "no_answer", message: "The server can't be reached." };
  });
}

async function preview(action) {
  try {
    const { ok, status, json } = await postJSON(`/api/campaigns/${slug}/preview`, { action });
    if (!ok) return { error: json.error?.message || `No odds (${status}).` };
    return { odds: json.odds };
  } catch {
    return { error: "No odds: the server can't be reached." };
  }
}

function notice(message, tone = "error") {
  noticeEl.textContent = message || "";
  noticeEl.dataset.tone = tone;
}

// --- the socket ---------------------------------------------------------------------------

function setConn(state, text) {
  connEl.dataset.state = state;
  fill(connEl, text);
  reconnectBtn.hidden = state !== "offline";
  root.dataset.conn = state;
}

// "Offline: reconnecting in 7 s…", counting down each second. The seconds are hidden from
// screen readers: the status region announces going offline once, not every tick.
function showCountdown() {
  const ms = retryAt - Date.now();
  const text = ` in ${Math.max(1, Math.ceil(ms / 1000))} s`;
  const shown = connEl.dataset.state === "offline" && connEl.querySelector(".countdown");
  if (shown) shown.textContent = text; // only the hidden seconds change: nothing to re-announce
  else setConn("offline", ["Offline: reconnecting", h("span", { class: "countdown", "aria-hidden": "true" }, text), "…"]);
  // The next tick lands just after the next whole second, so a late timer never skips a number.
  countdownTimer = setTimeout(showCountdown, ms > 0 ? (ms % 1000) + 5 : 1000);
}

// Rolling needs the live table: while it is not live, the buttons that roll or act are
// disabled (marked data-offline) and come back when it is; buttons drawn meanwhile too.
const ROLLERS = "#sheet-wrap button[data-action], #composer button[type=submit], #roll-form button[type=submit], #log .ev-follow button, #waiting button";
function syncRollButtons() {
  const offline = root.dataset.conn !== "online";
  if (!offline && !root.querySelector("[data-offline]")) return;
  for (const button of root.querySelectorAll(ROLLERS)) {
    if (offline && !button.disabled) { button.disabled = true; button.dataset.offline = "1"; }
    else if (!offline && button.dataset.offline) { delete button.dataset.offline; button.disabled = false; }
  }
}
new MutationObserver(syncRollButtons).observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ["disabled", "data-conn"] });

function connect() {
  clearTimeout(retryTimer);
  clearTimeout(countdownTimer);
  retryTimer = null;
  if (socket) {
    socket.onmessage = socket.onclose = null;
    try { socket.close(); } catch { /* already closed */ }
  }
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  reportedHead = null; // a new socket is a new presence: report again
  const ws = new WebSocket(`${scheme}://${location.host}/ws/campaigns/${slug}/table/?after=${lastSeq}`);
  socket = ws;
  setConn("connecting", retry ? "Reconnecting…" : "Connecting…");
  ws.onmessage = (msg) => {
    lastFrameAt = Date.now();
    handle(parseJSON(msg.data));
  };
  ws.onclose = (ev) => {
    if (socket !== ws) return;
    for (const [id, p] of pending) { // commands in flight: the server may or may not have them (sendCommand resends)
      pending.delete(id);
      p.onError({ code: "connection_lost", message: "The connection dropped." });
    }
    // 44xx: refused (not logged in, not a member, revoked...), except 4429 (too many sockets: a
    // restart elsewhere frees one); anything else, 4503 (the server's database is away) included,
    // is tried again with the backoff below. 4012: that process is stopping; another one takes
    // the page at once (jittered, so its sockets don't all land in the same instant).
    if (ev.code >= 4400 && ev.code < 4500 && ev.code !== 4429) {
      setConn("closed", "Refused by the server: reload the page.");
      return;
    }
    const restarting = ev.code === 4012;
    const delay = restarting ? 100 + Math.random() * 900 : Math.min(10000, 500 * 2 ** retry) * (0.5 + Math.random() / 2);
    if (!restarting) retry += 1;
    retryAt = Date.now() + delay;
    showCountdown();
    retryTimer = setTimeout(connect, delay);
  };
}

reconnectBtn.addEventListener("click", () => { retry = Math.max(retry, 1); connect(); });
window.addEventListener("online", () => { if (retryTimer) connect(); });
// The browser says the network is gone: the socket may linger (Chromium keeps one open for a
// while), but nothing sent on it arrives. The page says so at once and holds its buttons back,
// instead of reading "Live" with every button on.
window.addEventListener("offline", () => {
  const ws = socket;
  if (!ws || ws.readyState > WebSocket.OPEN) return;
  const lost = ws.onclose;
  ws.onmessage = ws.onclose = null;
  try { ws.close(); } catch { /* already closing */ }
  lost?.({ code: 1006 }); // as if it had closed: in-flight commands in doubt, the countdown to a new one
});
// A socket that went quiet (laptop asleep, proxy dropped it) is replaced: the server
// sends a heartbeat every few seconds, so silence means the socket is dead.
setInterval(() => {
  if (!socket || socket.readyState !== WebSocket.OPEN) return;
  const quiet = Date.now() - lastFrameAt;
  if (quiet > 45000) socket.close();
  else if (quiet > 20000) socket.send(JSON.stringify({ type: "ping" }));
}, 5000);

// --- the chain: checking the log this page is shown ---------------------------------------

const chainHeadEl = document.getElementById("chain-head");
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
let reportedHead = null; // what this socket last told the others (presence carries it)

// Tell the table which head this browser verified, so members shown different logs find out.
function reportHead() {
  const head = chain.head;
  if (!head || !socket || socket.readyState !== WebSocket.OPEN) return;
  if (reportedHead && reportedHead.seq === head.seq && reportedHead.hash === head.hash) return;
  reportedHead = head;
  socket.send(JSON.stringify({ type: "head", head: { seq: head.seq, hash: head.hash } }));
}

function showProblem(problem) {
  fill(document.getElementById("chain-problems"),
    ...chain.problems.map((p) => h("li", { dataset: { seq: p.seq, kind: p.kind } }, p.message)));
  document.getElementById("chain-alarm-title").textContent = chain.broken
    ? "This server's log is not the one your browser verified"
    : chain.problems.some((p) => p.kind === "command") ? "The server may have chosen your dice"
      : chain.problems.some((p) => p.kind === "signed") ? "A member's command does not check out"
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

// --- receipts (signed checkpoints) ---------------------------------------------------------------

const receiptName = (c) => `talekeeper-${slug}-receipt-${c.seq}.json`;

/** The newest receipts, newest first, as `GET .../checkpoints?order=newest` gives them. */
function renderReceipts(list) {
  fill(document.getElementById("receipt-list"), ...list.map((c) => h("li", null,
    h("span", null, `#${c.seq} · ${short(c.hash)}`),
    // UTC, as the log, the audit and the exports say every time: one clock for the whole table.
    h("time", { class: "muted", datetime: c.created_at }, `${new Date(c.created_at).toISOString().slice(0, 16).replace("T", " ")} UTC`),
    h("button", { type: "button", class: "link small", "aria-label": `Download the receipt for #${c.seq}`,
      onclick: () => download(receiptName(c), c) }, "download"))));
}

async function loadReceipts() {
  try {
    const res = await fetch(`/api/campaigns/${slug}/checkpoints?order=newest&limit=10`, { credentials: "same-origin" });
    if (res.ok) renderReceipts((await res.json()).checkpoints || []);
  } catch { /* offline: the list stays as it was */ }
}

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

function handle(frame) {
  switch (frame.type) {
    case "event":
      if (frame.event.seq <= lastSeq) return; // already shown
      if (frame.event.seq !== lastSeq + 1) { socket.close(); return; } // gap: reconnect and catch up
      lastSeq = frame.event.seq;
      chain.event(frame.event);
      showEvent(asNow(frame.event), frame.sheets);
      break;
    case "ready":
      chain.serverHead(frame.head, { ends: true }).then(reportHead);
      retry = 0;
      setConn("online", "Live");
      if (rosterMissed) scheduleRoster();
      olderBtn.hidden = firstShown <= 1;
      if (loading) {
        loading = false;
        for (const id of charEvents.keys()) updateFollowUps(id);
        const turn = document.getElementById(`seq-${lastEncounterSeq}`);
        if (turn) updateFollow(turn, events.get(lastEncounterSeq));
      }
      break;
    case "heartbeat":
      if (frame.seq > lastSeq) socket.close(); // we missed something: reconnect from lastSeq
      chain.serverHead(frame.head).then(reportHead);
      break;
    case "pong":
      chain.serverHead(frame.head);
      break;
    case "presence":
      chain.memberHeads(frame.members, me.username);
      present = new Set(frame.members.map((m) => m.username));
      memberHeads = new Map(frame.members.filter((m) => m.head).map((m) => [m.username, m.head]));
      for (const m of frame.members) if (!members.has(m.username)) members.set(m.username, m.role);
      renderMembers();
      break;
    case "ack": {
      chain.serverHead(frame.head);
      const p = pending.get(frame.id);
      pending.delete(frame.id);
      if (p) p.onAck(frame);
      break;
    }
    case "error": {
      const p = pending.get(frame.id);
      pending.delete(frame.id);
      if (p) p.onError(frame);
      else notice(frame.message);
      break;
    }
  }
}

// --- describing events ----------------------------------------------------------------------

function visibilityBadge(ev) {
  if (!ev.visibility || ev.visibility === "public") return null;
  if (ev.visibility === "whisper") {
    const to = (ev.payload?.to || []).map((r) => r.username);
    return h("span", { class: "badge vis whisper", title: "A whisper: only its sender, the members it names and the GM read it" },
      to.length ? `whisper to ${to.join(", ")}` : "whisper");
  }
  // A GM's decision some members read too names them in its payload (stored "gm"; "shared" before):
  // only those who read it see whom (campaign/hidden.py). A sealed one is any GM-only event.
  const names = ev.hidden ? [] : (ev.payload?.shared_with || []).map((r) => r.username);
  // A player's action on her own secret roll names her alone: to its readers, a secret roll.
  if (ev.visibility === "gm" && names.length === 1 && names[0] === ev.actor) {
    const secret = VISIBILITIES.get("secret");
    return h("span", { class: "badge vis", title: secret?.means }, secret?.badge || "secret");
  }
  if ((ev.visibility === "gm" || ev.visibility === "shared") && names.length) {
    return h("span", { class: "badge vis", title: VISIBILITIES.get("shared")?.means }, `shared with ${names.join(", ")}`);
  }
  const words = VISIBILITIES.get(ev.visibility) || { means: ev.visibility, badge: ev.visibility };
  return h("span", { class: "badge vis", title: words.means }, words.badge);
}

function actionLabel(action, charId) {
  if (!action) return "";
  if (action.type === "roll") return `roll ${action.notation}${action.label ? ` (${action.label})` : ""}`;
  const state = chars.get(charId)?.state;
  return (system.describeAction && system.describeAction(action, state)) || words(action.type);
}

function rollDice(p) {
  const groups = [];
  // A term's text starts with what joins it: "+", "-" or "*" (rules/notation.py); labels follow it.
  const joined = (term, text) => `${term.op === "*" ? "×" : ""}${term.sign < 0 ? "−" : term.op === "*" ? "" : "+"}${text}${term.label ? ` ${term.label}` : ""}`;
  for (const term of p.terms || []) {
    if (term.constant !== undefined) { groups.push(h("span", { class: "const" }, joined(term, term.constant))); continue; }
    const chips = (term.dice || []).map((d) => {
      if (term.fate) return die(d.face > 0 ? "+" : d.face < 0 ? "−" : "0", "", `Fate die: ${d.face}`);
      const cls = [d.kept === false ? "off" : "", d.exploded ? "x" : "", d.success ? "hit" : ""].join(" ");
      const title = d.kept === false ? "dropped" : d.exploded ? "exploded: rolled again" : d.success ? "a success" : "";
      return die(`${d.face}${d.exploded ? "!" : ""}`, cls, title);
    });
    groups.push(diceGroup(joined(term, term.text.replace(/^[+*-]+/, "")).replace(/^\+/, ""), chips));
  }
  return groups;
}

// The platform's one-line events read as the audit page says them (campaign/audit.py LINES,
// passed as data.lines); these few are set apart as the frame of the evening.
const LINES = data.lines || {};
const FRAME = new Set(["session_started", "session_ended", "scene_started", "scene_ended", "encounter_started", "turn_advanced", "encounter_ended"]);

function describeCore(ev) {
  const p = ev.payload || {};
  if (Object.hasOwn(LINES, ev.type)) return { text: fillTemplate(LINES[ev.type], p), ...(FRAME.has(ev.type) ? { tone: "frame" } : {}) };
  switch (ev.type) {
    case "roll":
      return {
        text: `rolled ${p.notation}${p.label ? ` · ${p.label}` : ""}`,
        dice: rollDice(p),
        outcome: { label: `= ${p.total}${p.counts_successes ? (p.total === 1 ? " success" : " successes") : ""}`, tone: "total" },
      };
    case "character_created": { // as campaign/audit.py describe says it
      const text = `created ${p.npc ? "the NPC" : "the character"} ${p.name} for ${p.owner}`;
      return { text: p.limits_overridden ? `${text} (past the creation limits, by the GM)` : text };
    }
    case "event_voided": { // the voided event in the log's words for it, when this page holds it (else its seq alone)
      const target = events.get(p.seq);
      const said = target ? textOf(describe(target).text) : "";
      return { text: [`voided `, h("a", { href: `#seq-${p.seq}` }, `#${p.seq}`), said ? ` (${said})` : ""], detail: p.reason ? `Reason: ${p.reason}` : "" };
    }
    case "roll_revealed": {
      const body = p.body || p; // {seq, body: {type, payload, ...}}; older reveals: {seq, type, payload}
      const inner = describe({ ...ev, type: nowName(body.type), payload: body.payload || {}, hidden: false });
      return { ...inner, text: [`revealed `, h("a", { href: `#seq-${p.seq}` }, `#${p.seq}`), ": ", inner.text] };
    }
    case "roll_requested":
      return { text: `GM asks for ${actionLabel(asked(p), ev.character)}`, detail: p.note ? `“${p.note}”` : "" };
    case "sheet_adjusted": // as campaign/audit.py says it: each value's before and after, and why
      return { text: `adjusted the sheet: ${(p.changes || []).map((c) => `${c.path.replace(/^sheet\./, "")} ${c.from} → ${c.to}`).join(", ")}`,
        detail: p.reason ? `“${p.reason}”` : "", tone: "gm" };
    case "turn_order_set": return { text: `set the turn order: ${(p.order || []).map((id) => chars.get(id)?.name || `#${id}`).join(", ")}` };
    case "message_posted": // chat: in character it is said, out of character it is (ooc)
      return { text: p.kind === "ic" ? h("q", { class: "said" }, p.text) : [h("span", { class: "ooc-tag" }, "ooc "), p.text], tone: "chat" };
    case "bundle": { // one hidden command's rule events, stored as one (docs/hidden-information.md)
      const parts = (p.events || []).map((e) => describe({ ...ev, type: nowName(e.type), payload: e.payload || {}, hidden: false }));
      return { ...(parts[0] || {}), text: parts.flatMap((d, i) => [...(i ? [" · "] : []), ...[].concat(d.text)]) };
    }
    case "refused":
      return { text: `${words((typeof p.action === "object" ? p.action?.type : p.action) || "action")} refused, hidden from the player`, detail: p.message || "", tone: "hidden" };
    default:
      return null;
  }
}

// A line of a contest or an opposed roll says whom it was against, in every system: the character
// the action named (`vs_character`), the contest's opponent, the other side it changed (`sides`), or
// the opponent's name in words (MdT). A character this page does not know (an NPC the GM hides) stays
// unnamed, as the rest of the page leaves it.
function opponentName(ev) {
  const p = ev.payload || {};
  const id = p.action?.vs_character ?? p.contest?.opponent ?? (p.sides ? Number(Object.keys(p.sides)[0]) : null);
  return (id != null && id !== ev.character ? chars.get(id)?.name : null) || p.opponent_name || null;
}
function namingOpponent(ev, d) {
  const name = opponentName(ev);
  if (!name || textOf(d.text).includes(name)) return d;
  return { ...d, text: [].concat(d.text, ` (against ${name})`) };
}

function describe(ev) {
  // A sealed stub says who, when and who may read it (campaign/visibility.py SEALED_KEYS), never
  // what: not even that it was a roll (it may be an NPC the GM made). A whisper's visibility says it.
  if (ev.hidden && ev.visibility === "whisper") return { text: "whispered to someone", tone: "hidden" };
  if (ev.hidden) {
    const sealed = ev.payload?.commitment;
    return { text: "did something in secret", tone: "hidden", detail: sealed ? `sealed: ${short(sealed)}…` : "" };
  }
  const ctx = { h, char: chars.get(ev.character), charName: ev.character_name };
  let d = null;
  try {
    d = describeCore(ev) || describeFight(ev, chars) || system.describe(ev, ctx);
  } catch (problem) {
    console.error("describe failed", ev, problem);
  }
  if (d) return namingOpponent(ev, d);
  const p = ev.payload || {};
  const spec = declared.events[ev.type];
  return {
    text: spec?.description ? fillTemplate(spec.description, p) : words(ev.type),
    outcome: p.outcome !== undefined ? { label: words(p.outcome), tone: p.success === true ? "good" : p.success === false ? "bad" : "total" } : null,
  };
}

// --- the log -------------------------------------------------------------------------------

function canAct(c) {
  return !!c && !isSpectator && (isGM || c.owner === me.username);
}

// Events that can't be voided (the campaign's frame): campaign/actions/log_entries.py, via the page.
const UNVOIDABLE = new Set(data.unvoidable || []);

function fillEvent(li, ev) {
  const d = describe(ev);
  li.className = `event ev-${ev.type}${ev.hidden ? " hidden-roll" : ""}${ev.voided ? " voided" : ""}${d.tone ? ` tone-${d.tone}` : ""}${li.classList.contains("new") ? " new" : ""}`;
  const speaker = ev.character_name || (ev.type === "message_posted" && !ev.hidden ? ev.payload?.character_name : null);
  const who = speaker
    ? [h("strong", { class: "who" }, speaker), ev.actor ? h("span", { class: "actor" }, ev.actor) : null]
    : [h("strong", { class: "who" }, ev.actor || "system")];
  // Times are UTC everywhere (table, audit, exports): one clock for a table spread over time zones.
  const time = h("time", { datetime: ev.created_at, title: `${ev.created_at.slice(0, 10)} ${ev.created_at.slice(11, 19)} UTC` },
    `${ev.created_at.slice(11, 16)} UTC`);
  const head = h("div", { class: "ev-head" },
    h("span", { class: "seq" }, `#${ev.seq}`), trust.mark(ev.seq), h("span", { class: "ev-who" }, who),
    visibilityBadge(ev),
    revealedSeqs.has(ev.seq) ? h("span", { class: "badge revealed" }, "revealed") : null,
    ev.payload?.verifiable === false ? h("span", { class: "badge unverifiable",
      title: "Rolled outside a play session: the server's random numbers, with no seed to check them against" }, "not verifiable") : null,
    ev.voided ? h("span", { class: "badge void" }, "voided") : null,
    h("span", { class: "spacer" }),
    isGM ? gmTools(li, ev) : null,
    time);
  const body = h("div", { class: "ev-body" },
    h("span", { class: "what" }, d.text),
    d.dice && d.dice.length ? h("span", { class: "dice" }, d.dice) : null,
    d.outcome ? h("span", { class: `outcome ${d.outcome.tone || ""}` }, d.outcome.label) : null);
  const voider = voidedBy.get(ev.seq);
  fill(li, head, body,
    d.detail && (!Array.isArray(d.detail) || d.detail.length) ? h("p", { class: "ev-detail" }, d.detail) : null,
    ev.voided ? h("p", { class: "ev-voided" }, voider ? `Voided by ${voider.actor} in #${voider.seq}: ${voider.payload.reason}` : "Voided by the GM.") : null,
    h("div", { class: "ev-follow", hidden: true }));
  if (!loading) updateFollow(li, ev);
}

function gmTools(li, ev) {
  const tools = h("span", { class: "ev-tools" });
  if (!ev.voided && !UNVOIDABLE.has(ev.type)) {
    tools.append(h("button", { type: "button", class: "small ghost", "aria-label": `Void event ${ev.seq}`,
      onclick: () => openVoid(li, ev) }, "Void"));
  }
  if (ev.visibility && ev.visibility !== "public" && ev.visibility !== "whisper" && !revealedSeqs.has(ev.seq) && !ev.voided) {
    // A reveal can't be taken back (the dice are everyone's from then on): it asks first.
    tools.append(h("button", { type: "button", class: "small ghost", "aria-label": `Reveal event ${ev.seq} to everyone`,
      onclick: (e) => askFirst(e.currentTarget, {
        question: `Reveal #${ev.seq} to everyone?`, yes: `Yes, reveal #${ev.seq} to everyone`, no: `No, keep #${ev.seq} hidden`,
        onYes: async () => {
          try { await sendCommand({ type: "reveal", seq: ev.seq }); } catch (problem) { notice(problem.message); throw problem; }
        },
      }) }, "Reveal"));
  }
  return tools.childElementCount ? tools : null;
}

function openVoid(li, ev) {
  const open = li.querySelector(".void-form");
  if (open) { open.querySelector("input").focus(); return; }
  const input = h("input", { name: "reason", required: true, maxlength: 500, id: `void-reason-${ev.seq}`, placeholder: "e.g. wrong skill" });
  const error = h("span", { class: "error", role: "alert" });
  const form = h("form", { class: "void-form", "aria-label": `Void event ${ev.seq}` },
    h("label", { for: input.id }, `Why void #${ev.seq}?`), input,
    h("button", { type: "submit", class: "small danger" }, `Void #${ev.seq}`),
    h("button", { type: "button", class: "small secondary", onclick: () => form.remove() }, "Cancel"), error);
  form.addEventListener("keydown", (e) => { if (e.key === "Escape") { e.stopPropagation(); form.remove(); li.querySelector(".ev-tools button")?.focus(); } });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!input.value.trim()) { error.textContent = "Say why."; return; }
    try {
      await sendCommand({ type: "void", seq: ev.seq, reason: input.value.trim() });
      form.remove();
    } catch (problem) { error.textContent = problem.message; }
  });
  li.append(form);
  input.focus();
}

function latest(ev, types) {
  const seqs = charEvents.get(ev.character) || [];
  for (let i = seqs.length - 1; i >= 0; i -= 1) {
    const other = events.get(seqs[i]);
    if (!other || other.voided) continue;
    if (types.includes(other.type)) return other.seq === ev.seq;
  }
  return false;
}

function laterEvents(ev) {
  const seqs = charEvents.get(ev.character) || [];
  return seqs.filter((s) => s > ev.seq).map((s) => events.get(s)).filter((e) => e && !e.voided);
}

// Buttons and small forms on a roll in the log: they send one action for the event's character.
function followCtx(ev) {
  const c = chars.get(ev.character);
  const withChar = (action) => ({ ...action, character: ev.character });
  const send = async (action) => {
    notice("");
    try {
      await sendCommand(withChar(action), { show: "card" });
    } catch (problem) {
      notice(problem.message);
      throw problem;
    }
  };
  return {
    // Choices on a roll are offered to its player (the GM only for their own NPCs, and for
    // what is theirs to answer, such as approving Fate); the GM acts for anyone from the sheet.
    h, me, isGM, char: c, state: c?.state, canAct: !!c && !isSpectator && c.owner === me.username, latest, laterEvents, send,
    // a button that sends `action` at once, or (attrs.ask: what can't be taken back) once asked first
    act(label, action, attrs = {}) {
      return h("button", { type: "button", class: `small ${attrs.class || ""}`, title: attrs.title, "aria-label": attrs.label,
        onclick: async (e) => {
          if (attrs.ask) {
            askFirst(e.currentTarget, { question: attrs.ask, yes: `Yes, ${label.toLowerCase()}`, no: "No, keep it going", onYes: () => send(action) });
            return;
          }
          e.target.disabled = true;
          try { await send(action); } catch { e.target.disabled = false; }
        } }, label);
    },
    // a compact form (a totem picker, a reason, combat portions) that sends what it builds
    form(spec) {
      spec = withDeclaredLimits(spec);
      const form = buildForm(spec, { compact: true, noVisibility: !spec.rolls, preview: (a) => preview(withChar(a)),
        submit: async (action) => {
          await sendCommand(withChar(action), { show: "card" });
          form.dataset.sent = "1";
        } });
      return form;
    },
    // live odds of an action, e.g. beside a "Next round" button
    odds(action, fmt) {
      const out = h("span", { class: "muted small odds-inline" }, "…");
      preview(withChar(action)).then((r) => { out.textContent = r.error ? "" : (fmt ? fmt(r.odds) : formatOdds(r.odds)); });
      return out;
    },
  };
}

// The action a roll request asks for: "asked" where members sign (the request's own signed action is
// "action" there), "action" in older logs.
const asked = (p) => p.asked || p.action;

function requestFollow(ev, ctx) {
  const p = ev.payload;
  const c = chars.get(ev.character);
  if (!c) return [];
  // The server's rule (campaign/actions/commands.py _link_request): a request is answered by a later event
  // naming it ("answers") that is not voided; a voided answer opens it again. A hidden answer's
  // payload is sealed, so a hidden roll by the player counts as the answer here.
  // (A sealed event has no character, so it is looked for among all the later ones.)
  const answer = laterEvents(ev).find((e) => e.payload?.answers === ev.seq)
    || [...events.values()].find((e) => e.seq > ev.seq && e.hidden && !e.voided && e.actor === c.owner);
  if (answer) return [h("span", { class: "muted small" }, "answered in ", h("a", { href: `#seq-${answer.seq}` }, `#${answer.seq}`))];
  if (c.owner === me.username && !isSpectator) {
    const { character, ...wantedAction } = asked(p);
    const action = { ...wantedAction, request: ev.seq };
    const button = ctx.act(`Roll now: ${actionLabel(asked(p), ev.character)}`, action, { class: "primary roll-now" });
    button.dataset.rollNow = ev.seq;
    const fmt = (odds) => (system.oddsText ? system.oddsText(asked(p).type, odds) : formatOdds(odds));
    return [button, asked(p).type !== "roll" ? ctx.odds(action, fmt) : null];
  }
  return [h("span", { class: "muted small" }, `waiting for ${c.owner}`)];
}

// What can be done about an event now (buttons, small forms), for this member.
// What can be done about an event now, and the GM's "Apply to …" on a roll that deals damage (fight.js).
function followNodes(ev) {
  if (ev.hidden || ev.voided || !events.has(ev.seq)) return [];
  return [...followNodesOf(ev), ...onFightEvent.applyButtons(ev)];
}

function followNodesOf(ev) {
  if (ev.hidden || ev.voided || !events.has(ev.seq)) return [];
  if (ev.type === "turn_advanced") return turnFollow(ev);
  if (!ev.character) return [];
  // Choices are worked out from a sheet at least as new as the event: a new event reaches the page
  // before its sheet (pushed with the command's last event, or fetched), and the sheet of before
  // would offer what the event ended (the next round of a race it won, and a request for its odds).
  // The sheet's arrival works them out again (showSheet).
  if (ev.seq > pageHead && (chars.get(ev.character)?.seq || 0) < ev.seq) return [];
  const ctx = followCtx(ev);
  try {
    if (ev.type === "roll_requested") return requestFollow(ev, ctx).filter(Boolean);
    if (system.followUps && ctx.state) return (system.followUps(ev, ctx.state, ctx) || []).filter(Boolean);
  } catch (problem) {
    console.error("followUps failed", ev, problem);
  }
  return [];
}

// The table waits for this member when an event's follow-ups start with a primary button of
// their own (not inside a form): "Roll now" on a request, the GM's "Approve", "Next round".
const waitsForMe = (nodes) => nodes.some((n) => n instanceof HTMLButtonElement && n.classList.contains("primary"));

// A click is a press and then a release on the same element at the same place. Anything that
// replaces the pressed button between the two (its follow-up box rebuilt because a sheet arrived) or
// moves it (the waiting list above the log growing, the log scrolling to a new line) loses the click.
// So while a follow-up or waiting-list button is held down, those wait, and run just after the
// release and its click.
let pressed = null; // the .ev-follow box or the waiting list under the press
const held = new Map(); // what waits for the release: a key -> its update (the latest one wins)
document.addEventListener("pointerdown", (e) => {
  if (e.button !== 0) return; // a right-click's release may never come (the context menu takes it)
  pressed = e.target.closest?.(".ev-follow, #waiting-list") || null;
}, true);
function release() {
  pressed = null;
  if (!held.size) return;
  setTimeout(() => { // after the click the release causes
    if (pressed) return; // held down again meanwhile: that release runs them
    const updates = [...held.values()];
    held.clear();
    for (const update of updates) update();
  });
}
document.addEventListener("pointerup", release, true);
document.addEventListener("pointercancel", release, true);

function updateFollow(li, ev) {
  const box = li.querySelector(".ev-follow");
  if (!box) return;
  if (pressed && box === pressed) {
    held.set(box, () => updateFollow(li, events.get(ev.seq) || ev));
    return;
  }
  const nodes = followNodes(ev);
  setWaiting(ev, waitsForMe(nodes));
  // Keep a form someone is filling in rather than rebuilding it under their hands.
  const active = document.activeElement;
  const hadFocus = box.contains(active);
  if (hadFocus && active.matches("input, select, textarea") && !active.form?.dataset.sent) return;
  // The log was scrolled to its newest line before this box was drawn under it (the sheet it
  // reads may come later): a log that was at its end stays there, the buttons in view.
  const stick = li === logEl.lastElementChild && logEl.scrollHeight - logEl.scrollTop - logEl.clientHeight < 2;
  fill(box, ...nodes);
  box.hidden = !box.childElementCount;
  if (stick) logEl.scrollTop = logEl.scrollHeight;
  if (hadFocus) { // keyboard users keep their place: the next choice, or the log line itself
    const next = box.querySelector("button, input, select");
    if (next) next.focus();
    else { li.tabIndex = -1; li.focus(); }
  }
}

// Encounters (rules/encounter.py): the newest turn is the acting character's player's to end.
const ENCOUNTER_EVENTS = new Set(["encounter_started", "combatant_added", "turn_order_set", "turn_advanced", "encounter_ended"]);
let lastEncounterSeq = 0; // the newest encounter event shown: only a turn that is still the newest waits

function turnFollow(ev) {
  const p = ev.payload || {};
  if (ev.seq !== lastEncounterSeq) return [];
  const c = chars.get(p.acting);
  if (c && c.owner === me.username && !isSpectator) {
    return [h("button", { type: "button", class: "small primary", onclick: async (e) => {
      e.target.disabled = true;
      try { await sendCommand({ type: "advance_turn" }); } catch (problem) { notice(problem.message); e.target.disabled = false; }
    } }, `End ${p.name}'s turn`)];
  }
  return isGM ? [h("button", { type: "button", class: "small secondary", onclick: () => sendCommand({ type: "advance_turn" }).catch((problem) => notice(problem.message)) }, "Next turn")] : [];
}

function updateFollowUps(charId) {
  const seqs = (charEvents.get(charId) || []).slice(-30);
  for (const seq of seqs) {
    const li = document.getElementById(`seq-${seq}`);
    if (li) updateFollow(li, events.get(seq));
  }
}

// --- waiting for you: the list, the title badge, a sound, a desktop notification -------------------
//
// Worked out from the log like everything else: an event waits for this member while its
// follow-ups offer them a primary button (waitsForMe). The list repeats those buttons at the
// top of the page, so a GM reading another sheet (or a player on a phone) sees them.

const waitingEl = document.getElementById("waiting");
const waitingListEl = document.getElementById("waiting-list");
const waiting = new Set(); // seqs
const alerted = new Set(); // seqs already announced by sound / notification
const baseTitle = document.title;
const ALERTS_KEY = "talekeeper.alerts"; // {sound: bool, desktop: bool}, per browser, every campaign
const alertPrefs = (() => { try { return JSON.parse(localStorage.getItem(ALERTS_KEY)) || {}; } catch { return {}; } })();
let alertsPlayed = 0;
let waitingTimer = null;

function setWaiting(ev, yes) {
  if (yes === waiting.has(ev.seq)) return;
  if (yes) waiting.add(ev.seq); else waiting.delete(ev.seq);
  clearTimeout(waitingTimer);
  waitingTimer = setTimeout(renderWaiting, 0); // once per batch of events
}

function renderWaiting() {
  if (pressed) { held.set(renderWaiting, renderWaiting); return; } // it sits above the log: it would move the button
  const list = [...waiting].sort((a, b) => a - b).map((seq) => events.get(seq)).filter(Boolean);
  document.title = list.length ? `(${list.length}) ${baseTitle}` : baseTitle;
  waitingEl.hidden = !list.length;
  // Keep a form someone is filling in (a Deny reason) rather than rebuilding it under their hands.
  const active = document.activeElement;
  if (waitingListEl.contains(active) && active.matches("input, select, textarea")) return;
  fill(waitingListEl, ...list.map((ev) => {
    const d = describe(ev);
    return h("li", { class: "waiting-item", dataset: { seq: ev.seq } },
      h("span", { class: "what" }, ev.character_name ? h("strong", null, `${ev.character_name}: `) : null, d.text,
        d.outcome ? [" ", h("span", { class: `outcome ${d.outcome.tone || ""}` }, d.outcome.label)] : null),
      d.detail && typeof d.detail === "string" ? h("span", { class: "muted small" }, d.detail) : null,
      h("a", { class: "small", href: `#seq-${ev.seq}`, onclick: (e) => { e.preventDefault(); showInLog(ev.seq); } }, `#${ev.seq}`),
      h("span", { class: "waiting-actions" }, followNodes(ev)));
  }));
  const fresh = list.filter((ev) => ev.seq > pageHead && !alerted.has(ev.seq));
  for (const ev of list) alerted.add(ev.seq);
  if (fresh.length) announce(fresh[fresh.length - 1]);
}

function announce(ev) {
  const text = `${ev.character_name ? `${ev.character_name}: ` : ""}${textOf(describe(ev).text)}`;
  if (alertPrefs.sound) beep();
  if (alertPrefs.desktop && window.Notification?.permission === "granted" && document.visibilityState !== "visible") {
    try {
      const n = new Notification(`${data.name || baseTitle}: waiting for you`, { body: text, tag: `talekeeper-${slug}-${ev.seq}` });
      n.onclick = () => { window.focus(); showInLog(ev.seq); };
    } catch { /* some browsers only notify from a service worker: the list and the title still show it */ }
  }
}

const textOf = (nodes) => [].concat(nodes).map((n) => (typeof n === "string" ? n : n?.textContent || "")).join("");

let audio = null;
function beep() {
  alertsPlayed += 1;
  try {
    audio ??= new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = 660;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.35);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.35);
  } catch { /* no audio here: the list and the title still show it */ }
}

function setUpAlerts() {
  const sound = document.getElementById("alert-sound");
  const desktop = document.getElementById("alert-desktop");
  const note = document.getElementById("alert-note");
  const save = () => localStorage.setItem(ALERTS_KEY, JSON.stringify(alertPrefs));
  sound.checked = !!alertPrefs.sound;
  desktop.checked = !!alertPrefs.desktop && window.Notification?.permission === "granted";
  if (!window.Notification) {
    desktop.disabled = true;
    note.textContent = "This browser offers no desktop notifications here (they need https or localhost).";
  }
  sound.addEventListener("change", () => {
    alertPrefs.sound = sound.checked;
    save();
    if (sound.checked) { audio ??= new AudioContext(); audio.resume?.(); } // a click unlocks audio for later
  });
  desktop.addEventListener("change", async () => {
    note.textContent = "";
    if (desktop.checked && Notification.permission !== "granted") {
      const answer = await Notification.requestPermission();
      if (answer !== "granted") {
        desktop.checked = false;
        note.textContent = "The browser refused: allow notifications for this site in its settings.";
      }
    }
    alertPrefs.desktop = desktop.checked;
    save();
  });
}

function register(ev, prepend) {
  events.set(ev.seq, ev);
  if (ev.type === "roll_revealed" && ev.payload?.seq) revealedSeqs.add(ev.payload.seq);
  if (ev.type === "event_voided" && ev.payload?.seq) voidedBy.set(ev.payload.seq, ev);
  if (ev.character) {
    if (!charEvents.has(ev.character)) charEvents.set(ev.character, []);
    const list = charEvents.get(ev.character);
    if (prepend) list.unshift(ev.seq); else list.push(ev.seq);
  }
}

function place(li, prepend, mine = false) {
  if (prepend) { logEl.prepend(li); return; }
  const nearBottom = logEl.scrollHeight - logEl.scrollTop - logEl.clientHeight < 120;
  logEl.append(li);
  if (!nearBottom && !mine) return;
  // What you just did is always in the log's view (once a button held down there is let go).
  const scroll = () => { logEl.scrollTop = logEl.scrollHeight; };
  if (pressed) held.set(scroll, scroll); else scroll();
}

// sheets: the sheets this event changed, as the server pushed them with it (for this viewer); undefined when
// the server could not read them: then the page fetches what it needs.
function showEvent(ev, sheets) {
  register(ev, false);
  const li = h("li", { id: `seq-${ev.seq}`, dataset: { seq: ev.seq, type: ev.type }, class: ev.seq > pageHead ? "new" : "" });
  fillEvent(li, ev);
  place(li, false, ev.seq > pageHead && ev.actor === me.username);
  // Only what happens now is announced: the backlog loaded with the page (up to pageHead) is not.
  if (ev.seq > pageHead) liveEl.textContent = [li.querySelector(".ev-who"), li.querySelector(".what"), li.querySelector(".outcome")]
    .filter(Boolean).map((el) => [...el.childNodes].map((n) => n.textContent).join(" ")).join(": ");
  afterEvent(ev, sheets);
  if (resultWanted.has(ev.seq)) showResult(ev.seq);
}

// --- the acting member's result: in view where they acted ------------------------------------

const resultEl = document.getElementById("result");
const resultWanted = new Map(); // seq -> "card" | "log": the newest event of a command this page sent
let resultKept = null; // why the shown result is more hidden than its command asked (keptNote)
let resultSeq = null;
let resultDismissed = false; // its ✕: a result dismissed stays so, whichever tab is shown

function expectResult(seqs, show, asked) {
  const seq = Math.max(...seqs);
  resultWanted.set(seq, { show, asked });
  if (events.has(seq)) showResult(seq);
}

function inView(el) {
  const box = el.getBoundingClientRect();
  return box.top >= 0 && box.bottom <= window.innerHeight;
}

function showResult(seq) {
  const { show, asked } = resultWanted.get(seq);
  resultWanted.delete(seq);
  const li = document.getElementById(`seq-${seq}`);
  const kept = keptNote(events.get(seq), asked);
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
function renderResult() {
  const ev = events.get(resultSeq);
  if (!ev || resultDismissed || (ev.character != null && ev.character !== selected)) { resultEl.hidden = true; return; }
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

// Why a command came out more hidden than it asked (campaign/hidden.py): it read what some members
// may not see yet, so only those who may read all of it read it. Said to its sender only, in words of
// what she reads anyway (the event's own readers), so it tells her nothing her log does not.
function keptNote(ev, asked) {
  if (!asked || ev.visibility === asked || ev.visibility === "public" || ev.visibility === "whisper") return null;
  if (ev.hidden) return "Kept for the GM: it reads something of this character that only the GM sees yet.";
  const c = chars.get(ev.character);
  if (isGM && c?.npc && c.shown === "hidden") return `Kept for you: the players don't know ${c.name} is here (show it from its sheet first).`;
  // A name-only NPC's events are the GM's too (campaign/actions/npcs.py gm_keeps): not a secret it read.
  if (isGM && c?.npc && c.shown !== "full") return `Kept for you: the players know only ${c.name}'s name, not its rolls (show it in full from its sheet first).`;
  const others = (ev.payload?.shared_with || []).map((r) => r.username).filter((u) => u !== me.username);
  if (!isGM && asked === "secret" && !others.length) return null; // hers and the GM's, as she asked
  const whom = isGM ? (others.length ? `you and ${others.join(", ")}` : "you") : `you${others.length ? `, ${others.join(", ")}` : ""} and the GM`;
  return `Kept for ${whom}: it reads a secret or GM-only event not revealed yet, so only who may read that reads this.`;
}

function showInLog(seq) {
  const li = document.getElementById(`seq-${seq}`);
  if (!li) return;
  li.scrollIntoView({ block: "nearest" });
  li.tabIndex = -1;
  li.focus({ preventScroll: true });
}

function markVoided(seq) {
  const target = events.get(seq);
  if (!target) return;
  target.voided = true;
  fillEvent(document.getElementById(`seq-${seq}`), target);
  if (seq === resultSeq) renderResult();
}

function afterEvent(ev, sheets) {
  const p = ev.payload || {};
  if (ENCOUNTER_EVENTS.has(ev.type)) {
    const previous = lastEncounterSeq;
    lastEncounterSeq = ev.seq;
    const li = document.getElementById(`seq-${previous}`);
    if (li && !loading) updateFollow(li, events.get(previous));
    if (!loading) updateFollow(document.getElementById(`seq-${ev.seq}`), ev);
  }
  onEncounterEvent(ev);
  onFightEvent(ev);
  const appliedLine = p.applies && !loading && document.getElementById(`seq-${p.applies}`);
  if (appliedLine && events.has(p.applies)) updateFollow(appliedLine, events.get(p.applies)); // "applied to …" now
  const fresh = ev.seq > pageHead; // the page's sheets already include everything up to pageHead
  const pushed = Array.isArray(sheets);
  switch (ev.type) {
    case "event_voided": markVoided(p.seq); break;
    case "roll_revealed": {
      const target = events.get(p.seq);
      if (target) {
        const body = p.body || p;
        // Its character too: the stub named none, and the reveal is about the same character (its own).
        const shown = { ...target, hidden: false, type: body.type ? nowName(body.type) : target.type, payload: body.payload || target.payload,
          character: body.character ?? ev.character ?? null, character_name: ev.character_name ?? target.character_name ?? null };
        events.set(p.seq, shown);
        fillEvent(document.getElementById(`seq-${p.seq}`), shown);
        // A sealed void revealed (with the roll it voided, campaign/actions/log_entries.py): the roll is struck through.
        if (shown.type === "event_voided" && shown.payload?.seq) {
          voidedBy.set(shown.payload.seq, shown);
          markVoided(shown.payload.seq);
        }
      }
      break;
    }
    case "character_created":
      if (!chars.has(ev.character)) {
        chars.set(ev.character, { id: ev.character, name: p.name, owner: p.owner, npc: !!p.npc, shown: p.shown || "full",
          state: null, seq: 0, since: ev.seq });
        if (!pushed) scheduleRefresh(ev.character);
        if (pendingCreation && pendingCreation === p.name && ev.actor === me.username) {
          pendingCreation = null;
          selected = ev.character;
        }
        if (selected === null && canAct(chars.get(ev.character))) selected = ev.character;
        renderCharacters();
      }
      break;
    case "npc_shown": { // what the players see of an NPC from now on (docs/rules.md, platform 10)
      // Hiding one is sealed for the players (their page learns of it from the characters' list, below).
      const c = chars.get(ev.character) || { id: ev.character, name: p.name, owner: ev.actor, state: null, seq: 0, since: ev.seq };
      Object.assign(c, { npc: true, shown: p.shown });
      if (p.shown !== "full" && !isGM) Object.assign(c, { state: null, seq: 0 }); // the GM keeps its sheet from now on
      chars.set(ev.character, c);
      if (p.shown === "full" && !pushed) scheduleRefresh(ev.character); // pushed: the sheet came with it
      renderCharacters();
      break;
    }
    case "member_joined":
    case "member_role_changed":
      members.set(p.username, p.role);
      renderMembers();
      break;
    case "member_removed":
      members.delete(p.username);
      renderMembers();
      break;
    case "session_started": session = p.session; scene = null; renderSession(); break;
    case "session_ended": session = null; scene = null; renderSession(); break;
    case "scene_started": scene = p.scene; sceneName = typeof p.name === "string" && p.name ? p.name : null; renderSession(); break;
    case "scene_ended": scene = null; sceneName = null; renderSession(); break;
  }
  // A sealed event names no character: a request its actor was asked for may be answered by it.
  if (ev.hidden && !ev.character && !loading) for (const c of chars.values()) if (c.owner === ev.actor) updateFollowUps(c.id);
  // A sealed GM-only event may be the GM making an NPC the players know by name, or hiding one
  // again: the stub does not say (it must not). So the page asks for the characters it would
  // list on a reload, after every such event, whatever it was.
  if (ev.hidden && ev.visibility === "gm" && fresh) scheduleRoster();
  if (pushed) { // the sheets came with the event: nothing to fetch
    if (fresh) for (const body of sheets) applySheet(body);
    else if (ev.character && !loading) updateFollowUps(ev.character);
    return;
  }
  if (fresh && /^(session|scene)_(started|ended)$/.test(ev.type)) {
    for (const id of chars.keys()) scheduleRefresh(id); // scene ends lapse scene-scoped things
  }
  if (ev.character) {
    if (fresh) scheduleRefresh(ev.character);
    else if (!loading) updateFollowUps(ev.character);
  }
}

olderBtn.addEventListener("click", async () => {
  const after = Math.max(0, firstShown - 1 - RECENT);
  olderBtn.disabled = true;
  try {
    const page = (await eventsPage(slug, after, firstShown - 1 - after)).events;
    chain.older(page);
    const height = logEl.scrollHeight;
    for (const ev of page.reverse().map(asNow)) {
      if (events.has(ev.seq)) continue;
      register(ev, true);
      const li = h("li", { id: `seq-${ev.seq}`, dataset: { seq: ev.seq, type: ev.type } });
      fillEvent(li, ev);
      place(li, true);
    }
    for (const ev of page) { // a void shown before its event was: now it can say which event it took back
      const voider = voidedBy.get(ev.seq);
      const li = voider && document.getElementById(`seq-${voider.seq}`);
      if (li) fillEvent(li, events.get(voider.seq));
    }
    logEl.scrollTop += logEl.scrollHeight - height; // keep what you were reading in place
    firstShown = after + 1;
    olderBtn.hidden = firstShown <= 1;
  } catch {
    notice("The earlier events could not be loaded: try again.");
  } finally {
    olderBtn.disabled = false;
  }
});

// --- characters and sheets ---------------------------------------------------------------

const refreshTimers = new Map();
const refreshTokens = new Map();

function scheduleRefresh(id) {
  clearTimeout(refreshTimers.get(id));
  refreshTimers.set(id, setTimeout(() => refreshCharacter(id), 30));
}

// A sheet fetch the server could not answer (503 while its database pool is drained by a
// reconnect storm or an outage, 429, or no network) is tried again after a jittered pause,
// a few times: otherwise the page would keep showing a stale sheet until the next event.
const SHEET_RETRIES = 6;

async function refreshCharacter(id, attempt = 0) {
  const token = (refreshTokens.get(id) || 0) + 1;
  refreshTokens.set(id, token);
  let body;
  try {
    const res = await fetch(`/api/campaigns/${slug}/characters/${id}`, { credentials: "same-origin" });
    if (!res.ok) {
      if (res.status === 503 || res.status === 429) retryRefresh(id, token, attempt, res.headers.get("Retry-After"));
      return;
    }
    body = await res.json();
  } catch {
    retryRefresh(id, token, attempt, null);
    return;
  }
  if (refreshTokens.get(id) !== token) return; // a newer refresh or a pushed sheet came meanwhile
  showSheet(body);
}

function retryRefresh(id, token, attempt, retryAfter) {
  if (attempt >= SHEET_RETRIES) return;
  // Retry-After (seconds, at most 5) or 1 s, growing per attempt, spread so pages that failed
  // together do not come back together.
  const base = Math.min(Number(retryAfter) || 1, 5) * 1000 * (attempt + 1);
  const wait = base * (0.5 + Math.random());
  refreshTimers.set(id, setTimeout(() => {
    if (refreshTokens.get(id) === token) refreshCharacter(id, attempt + 1); // nothing newer came meanwhile
  }, wait));
}

// The characters this member may know of (GET .../characters: the list the page starts from), after
// a sealed event that may have changed it. Sheets are fetched as for any new character.
let rosterTimer = null;
let rosterToken = 0;
let rosterHead = 0; // the newest list applied: an older answer arriving late changes nothing
let rosterMissed = false; // the list could not be read: the next connection's "ready" asks again

function scheduleRoster() {
  clearTimeout(rosterTimer);
  rosterTimer = setTimeout(refreshRoster, 30); // once for a batch of events (a backlog)
}

async function refreshRoster(attempt = 0) {
  const token = ++rosterToken;
  let body;
  try {
    const res = await fetch(`/api/campaigns/${slug}/characters`, { credentials: "same-origin" });
    if (!res.ok) {
      if ((res.status === 503 || res.status === 429) && attempt < SHEET_RETRIES) {
        rosterTimer = setTimeout(() => { if (rosterToken === token) refreshRoster(attempt + 1); }, 1000 * (attempt + 1) * (0.5 + Math.random()));
      } else rosterMissed = true;
      return;
    }
    body = await res.json();
  } catch {
    rosterMissed = true; // no network: the sealed event that asked is shown already, so ask on the reconnect
    return;
  }
  if (token !== rosterToken) return;
  rosterMissed = false;
  if (body.head < rosterHead) return;
  rosterHead = body.head;
  const listed = new Map(body.characters.map((c) => [c.id, c]));
  let changed = false;
  for (const [id, c] of chars) {
    // Gone from the list: the GM hid it. Not yet in it: made after the list was read (its event came first).
    if (!listed.has(id) && (c.since || 0) <= body.head) { chars.delete(id); changed = true; }
  }
  for (const entry of listed.values()) {
    const c = chars.get(entry.id);
    if (c) {
      if (c.shown !== entry.shown) changed = true;
      Object.assign(c, { name: entry.name, owner: entry.owner, npc: entry.npc, shown: entry.shown });
      if (!isGM && c.npc && c.shown !== "full") Object.assign(c, { state: null, seq: 0 });
      continue;
    }
    chars.set(entry.id, { ...entry, state: null, seq: 0, since: body.head });
    if (isGM || !entry.npc || entry.shown === "full") scheduleRefresh(entry.id);
    changed = true;
  }
  if (changed) renderCharacters();
}

// A sheet the server pushed with an event: the same body as GET .../characters/<id>, for this viewer.
function applySheet(body) {
  const id = body.character;
  if ((chars.get(id)?.seq || 0) > body.seq) return; // the page already shows a newer sheet
  clearTimeout(refreshTimers.get(id));
  refreshTokens.set(id, (refreshTokens.get(id) || 0) + 1); // a fetch still on its way is older: drop it
  showSheet(body);
}

function showSheet(body) {
  const id = body.character;
  const c = chars.get(id) || { id };
  const first = !c.state; // the selected character's forms may offer choices from this sheet (sheetCtx opponents)
  Object.assign(c, { name: body.name, owner: body.owner, state: body.state, seq: body.seq, advances: body.advances });
  chars.set(id, c);
  if (id === selected || first) renderHero();
  updateFollowUps(id);
}

function orderedCharacters() {
  const list = [...chars.values()];
  const mine = (c) => (c.owner === me.username ? 0 : 1);
  return list.sort((a, b) => mine(a) - mine(b) || a.name.localeCompare(b.name) || a.id - b.id);
}

function renderCharacters() {
  onEncounterEvent.charactersChanged?.();
  onFightEvent.charactersChanged?.();
  const tabs = document.getElementById("char-tabs");
  const list = orderedCharacters();
  if (selected === null || !chars.has(selected)) {
    selected = (list.find((c) => canAct(c) && !isGM) || list[0])?.id ?? null;
  }
  // An NPC's tab says so: the GM's read "Ghoul (you)", every one of them, and the players' "Ghoul · gm".
  fill(tabs, ...list.map((c) => h("button", {
    type: "button", role: "tab", id: `tab-${c.id}`, "aria-selected": c.id === selected ? "true" : "false", "aria-controls": "sheet-wrap",
    tabindex: c.id === selected ? 0 : -1, class: c.owner === me.username ? "mine" : "",
    onclick: () => selectCharacter(c.id),
  }, c.name, h("span", { class: "tab-owner" }, c.npc ? " · NPC" : c.owner === me.username ? " (you)" : ` · ${c.owner}`))));
  // the dice box's "For" and the GM's owner list follow the characters and members
  diceBox.renderFor(list.filter(canAct));
  renderChatOptions();
  renderHero();
}

function selectCharacter(id, focusTab = false) {
  if (!chars.has(id)) return;
  if (selected !== id) closeComposer(false);
  selected = id;
  for (const tab of document.querySelectorAll("#char-tabs [role=tab]")) {
    const on = tab.id === `tab-${id}`;
    tab.setAttribute("aria-selected", on ? "true" : "false");
    tab.tabIndex = on ? 0 : -1;
    if (on && focusTab) tab.focus();
  }
  renderHero();
  renderResult();
}

document.getElementById("char-tabs").addEventListener("keydown", (e) => {
  if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) return;
  e.preventDefault();
  stepCharacter(e.key === "ArrowLeft" ? -1 : e.key === "ArrowRight" ? 1 : e.key === "Home" ? -Infinity : Infinity, true);
});

function stepCharacter(step, focusTab = false) {
  const list = orderedCharacters();
  if (!list.length) return;
  const at = list.findIndex((c) => c.id === selected);
  let next = step === -Infinity ? 0 : step === Infinity ? list.length - 1 : (at + step + list.length) % list.length;
  selectCharacter(list[next].id, focusTab);
}

function sheetCtx(c, specs, placed) {
  return {
    h, me, isGM, char: c, canAct: canAct(c),
    // What each advance costs now, priced by the server's rules with the sheet (campaign/sheets.py
    // sheet_body, RuleSystem.advances): the buy-advance forms show these, never a price of their own.
    advances: c.advances || null,
    // Whom this member may name as an opponent: any other character for the GM; a player, the
    // players' characters and NPCs shown in full (campaign/actions/contests.py refuses the rest).
    // ``state``: the opponent's sheet as this page holds it (null until loaded), for a form that offers
    // choices from it (WYRM: their helping skills).
    opponents: [...chars.values()].filter((o) => o.id !== c.id && (isGM || !o.npc || o.shown === "full"))
      .map((o) => ({ value: o.id, label: o.name, state: o.state || null })),
    last: (type, name, fallback) => lastValues[type]?.[name] ?? fallback,
    // The first value `pick(event)` gives, newest event first (of those this page holds and may read).
    recent(pick) {
      for (const seq of [...events.keys()].sort((a, b) => b - a)) {
        const ev = events.get(seq);
        if (ev.hidden || ev.voided) continue;
        const value = pick(ev);
        if (value !== undefined && value !== null) return value;
      }
      return undefined;
    },
    roleOf: (username) => members.get(username),
    // a button in the sheet that starts action `id` (plain text for those who can't act)
    button(id, content, attrs = {}) {
      const spec = specs.get(id);
      if (!spec) return h("span", { class: `static ${attrs.class || ""}` }, content);
      placed.add(id);
      return h("button", { type: "button", class: `act ${attrs.class || ""}`, dataset: { action: id },
        title: attrs.title || spec.title, "aria-label": attrs.label, onclick: (e) => startAction(spec, c.id, e.currentTarget) }, content);
    },
  };
}

function renderHero() {
  const sheetEl = document.getElementById("sheet");
  const actionsEl = document.getElementById("actions");
  const c = chars.get(selected);
  const focused = document.activeElement?.closest?.("#sheet-wrap") ? document.activeElement.dataset.action : null;
  document.getElementById("hero-title").textContent = c ? c.name : "Characters";
  document.getElementById("sheet-wrap").setAttribute("aria-labelledby", c ? `tab-${c.id}` : "hero-title");
  if (!c) {
    fill(sheetEl, h("p", { class: "muted" }, isSpectator ? "No characters yet." : "No characters yet: create one with the “New character” form."));
    fill(actionsEl);
    return;
  }
  if (!c.state) {
    // An NPC shown by name only has no sheet for the players (campaign/actions/access.py says the same).
    const kept = c.npc && c.shown !== "full" && !isGM;
    fill(sheetEl, h("p", { class: "muted" }, kept ? `The GM keeps ${c.name}'s sheet to themselves.` : "Loading the sheet…"));
    fill(actionsEl);
    return;
  }
  const specs = new Map();
  const placed = new Set();
  const ctx = sheetCtx(c, specs, placed);
  if (canAct(c)) {
    for (const spec of system.actions(c.state, ctx) || []) specs.set(spec.id, { group: "Actions", ...spec });
    if (isGM && system.gmTools) for (const spec of system.gmTools(c.state, ctx) || []) specs.set(spec.id, { group: "GM tools", gm: true, ...spec });
    // Declared actions the system's table module does not lay out get a form built from their
    // declaration alone (rules/declare.py): a new action is playable as soon as it is declared.
    const offered = new Set([...specs.values()].map((spec) => spec.type));
    for (const spec of declaredSpecs()) if (!offered.has(spec.type) && (!spec.gm || isGM)) specs.set(spec.id, spec);
    if (isGM && c.npc) specs.set("show_npc", showNpcSpec(c));
    if (isGM) specs.set("adjust_sheet", adjustSpec(c));
  }
  let sheet;
  try {
    sheet = system.renderSheet(c.state, ctx);
  } catch (problem) {
    console.error("renderSheet failed", problem);
    sheet = h("pre", { class: "state" }, JSON.stringify(c.state, null, 1));
  }
  const owner = h("p", { class: "muted small owner-line" },
    isGM && c.npc ? `Your NPC · ${SHOWN.get(c.shown) || c.shown}` : c.owner === me.username ? "Your character" : `Played by ${c.owner}`,
    canAct(c) ? "" : " · you can read this sheet");
  fill(sheetEl, owner, sheet);
  const groups = new Map();
  for (const spec of specs.values()) {
    if (placed.has(spec.id)) continue;
    if (!groups.has(spec.group)) groups.set(spec.group, []);
    groups.get(spec.group).push(spec);
  }
  fill(actionsEl, ...[...groups].map(([group, list]) => h("div", { class: `action-group${list[0].gm ? " gm" : ""}` },
    h("h3", { class: "h4" }, group),
    h("div", { class: "buttons" }, list.map((spec) => h("button", {
      type: "button", class: `act ${spec.gm ? "gm" : ""}`, dataset: { action: spec.id }, title: spec.title,
      onclick: (e) => startAction(spec, c.id, e.currentTarget),
    }, spec.label))))));
  // number keys 1..9 start the first nine actions, in the order they appear
  let n = 0;
  for (const button of document.querySelectorAll("#sheet-wrap button[data-action]")) {
    if (n >= 9) break;
    n += 1;
    button.dataset.key = n;
    button.append(h("kbd", { class: "key", "aria-hidden": "true" }, String(n)));
    button.setAttribute("aria-keyshortcuts", String(n));
  }
  if (focused) document.querySelector(`#sheet-wrap [data-action="${CSS.escape(focused)}"]`)?.focus();
  if (composer && composer.charId === c.id) {
    const fresh = specs.get(composer.spec.id);
    if (!fresh) closeComposer(false);
  }
}

// The GM's choice of what the players see of an NPC from now on: the platform's show_npc
// (campaign/actions/npcs.py), offered the ways it is not shown now.
function showNpcSpec(c) {
  const options = [...SHOWN].filter(([value]) => value !== c.shown).map(([value, label]) => ({ value, label }));
  return {
    id: "show_npc", type: "show_npc", group: "GM tools", gm: true, label: "What the players see",
    title: `What the players see of ${c.name}`, submit: "Change it",
    help: `Now: ${SHOWN.get(c.shown) || c.shown}. Shown fully, the players read its sheet from its creation on; its hidden rolls stay hidden until you reveal them.`,
    fields: [{ name: "shown", label: "The players see", kind: "select", value: options[0]?.value, options }],
    build: (v) => ({ type: "show_npc", shown: v.shown }),
  };
}

// --- the action form (composer) ---------------------------------------------------------

function startAction(spec, charId, opener) {
  const c = chars.get(charId);
  if (!c) return;
  if (spec.immediate) {
    notice("");
    sendCommand({ ...spec.build({}), character: charId }, { show: "card" }).catch((problem) => notice(problem.message));
    return;
  }
  openComposer(spec, charId, opener);
}

// An action form from the declaration alone (kinds as rules/declare.py names them); null when a
// field has a kind a form can't show yet (a group), so no half-working form is offered.
function declaredForm(d) {
  const fields = [];
  for (const f of d.fields || []) {
    const base = { name: f.name, label: f.label || cap(words(f.name)), optional: !f.required, hint: f.help };
    if (f.kind === "integer") fields.push({ ...base, kind: "number", min: f.min, max: f.max, value: f.default ?? (f.required ? f.min : "") });
    else if (f.kind === "text") fields.push({ ...base, kind: "text", maxlength: f.maxLength, value: f.default ?? "" });
    else if (f.kind === "choice") fields.push({ ...base, kind: "select", value: f.default ?? (f.required ? f.choices[0]?.value : ""),
      options: [...(f.required ? [] : [{ value: "", label: "—" }]), ...f.choices] });
    else if (f.kind === "flag") fields.push({ ...base, kind: "checkbox", value: !!f.default });
    else if (f.kind === "list" && f.item?.kind === "choice") fields.push({ ...base, kind: "checks", options: f.item.choices, value: f.default || [] });
    else return null;
  }
  return {
    id: `declared:${d.type}`, type: d.type, group: d.by === "gm" ? "GM tools" : "Actions", gm: d.by === "gm",
    label: d.title, title: d.title, help: d.help, rolls: d.rolls, preview: d.rolls, fields,
    build: (values) => Object.fromEntries([["type", d.type],
      ...fields.map((f) => [f.name, values[f.name]]).filter(([, v]) => v !== null && v !== "" && v !== undefined)]),
  };
}
// Only actions the system's table module does not list in its `handles`: those it offers its own
// way (a sheet button, a choice on a roll such as WYRM's Fate approval, the health track's tools
// from health.js where the system shows the track).
let declaredSpecsCache = null;
const declaredSpecs = () => (declaredSpecsCache ??= (() => {
  const handled = new Set(system.handles || []);
  return Object.values(declared.actions || {}).filter((d) => !handled.has(d.type)).map(declaredForm).filter(Boolean);
})());

// The limits of an action's fields come from its declaration (rules/declare.py, served with the
// page): what the server checks is what the form checks as the player types. A system module's
// field names its declared field (``declared: "vs.attribute"`` where the form's name differs) and
// may only narrow the range with what the state says (a combat portion within the dice left).
function declaredField(type, path) {
  let fields = declared.actions?.[type]?.fields || [];
  let found = null;
  for (const part of path.split(".")) {
    found = fields.find((f) => f.name === part) || null;
    if (!found) return null;
    fields = found.fields || [];
  }
  return found;
}

function withDeclaredLimits(spec) {
  if (!spec.type || !spec.fields || !declared.actions?.[spec.type]) return spec;
  const fields = spec.fields.map((field) => {
    const d = field && declaredField(spec.type, field.declared || field.name);
    if (!d) return field;
    if (d.kind === "integer" && field.kind === "number") {
      return { ...field, min: Math.max(d.min, field.min ?? d.min), max: Math.min(d.max, field.max ?? d.max),
        optional: field.optional ?? !d.required };
    }
    if (d.kind === "text" && (!field.kind || field.kind === "text")) return { ...field, maxlength: d.maxLength, optional: field.optional ?? !d.required };
    return field;
  });
  return { ...spec, fields };
}

function openComposer(spec, charId, opener) {
  spec = withDeclaredLimits(spec);
  const c = chars.get(charId);
  const asking = isGM && spec.requestable && c.owner !== me.username && members.get(c.owner) !== "gm";
  const full = asking ? {
    ...spec,
    fields: [...(spec.fields || []), { name: "__note", kind: "text", label: `Note for ${c.owner} (when asking)`, optional: true, maxlength: 200 }],
    // One request to every player's character at once (several players, one test): each answers alone.
    extraButtons: [{ name: "ask", label: `Ask ${c.owner} to roll` },
      ...(playerCount() > 1 ? [{ name: "ask_all", label: "Ask every player" }] : [])],
    submit: `Roll for ${c.name}`,
  } : spec;
  const form = buildForm(full, {
    visibility: lastValues[spec.type]?.visibility,
    preview: (action) => preview({ ...action, character: charId }),
    remember: (values) => { lastValues[spec.type] = { ...(lastValues[spec.type] || {}), ...values }; },
    // A note is only sent when asking: Enter in the note, or with a note written, asks the player.
    enterButton: asking ? (field, values) => (field.name === "__note" || values.__note ? "ask" : null) : undefined,
    submit: async (action, { button, values }) => {
      if (button === "ask" || button === "ask_all") {
        const { visibility, ...wanted } = action;
        if (visibility) wanted.visibility = visibility;
        const asked = button === "ask_all" ? { characters: "players" } : { character: charId };
        await sendCommand({ type: "request_roll", ...asked, action: wanted, note: values.__note || "" }, { show: "card" });
      } else {
        await sendCommand({ ...action, character: charId }, { show: "card" });
      }
    },
    done: () => closeComposer(true),
    cancel: () => closeComposer(true),
  });
  composer = { spec, charId, opener };
  fill(composerEl, 
    h("div", { class: "composer-head" }, h("h3", { id: "composer-title" }, spec.title || spec.label),
      h("span", { class: "muted small" }, c.name)),
    spec.help ? h("p", { class: "muted small" }, spec.help) : null,
    form);
  composerEl.hidden = false;
  // The form, its odds and its Roll button in view (the dock sticks to the bottom of the screen).
  form.firstInput().focus({ preventScroll: true });
  if (form.firstInput().select) form.firstInput().select();
  if (!inView(composerEl)) composerEl.scrollIntoView({ block: "nearest" });
}

// How many of the characters are players' (not an NPC, not the GM's own): who "Ask every player" asks.
function playerCount() {
  return [...chars.values()].filter((c) => !c.npc && members.get(c.owner) !== "gm").length;
}

function closeComposer(returnFocus) {
  if (!composer) return;
  const opener = composer.opener;
  composer = null;
  composerEl.hidden = true;
  fill(composerEl);
  if (returnFocus) {
    const id = opener?.dataset?.action;
    const again = id ? document.querySelector(`#sheet-wrap [data-action="${CSS.escape(id)}"]`) : null;
    (again || opener)?.focus?.({ preventScroll: true }); // focus goes back, the screen stays on the result
  }
}

// --- members, presence, session -------------------------------------------------------------

function renderMembers() {
  const roleName = { gm: "GM", player: "player", spectator: "spectator" };
  const list = [...members].sort((a, b) => (a[1] === "gm" ? -1 : b[1] === "gm" ? 1 : a[0].localeCompare(b[0])));
  const headOf = (name) => memberHeads.get(name);
  fill(document.getElementById("members"), ...list.map(([name, role]) => h("li", { class: present.has(name) ? "online" : "away",
    dataset: headOf(name) ? { headSeq: headOf(name).seq, headHash: headOf(name).hash } : {},
    title: headOf(name) ? `${name}'s browser verified the log to #${headOf(name).seq} · ${short(headOf(name).hash)}` : null },
    h("span", { class: "dot", "aria-hidden": "true" }), name, " ", h("span", { class: "muted small" }, roleName[role] || role),
    h("span", { class: "sr-only" }, present.has(name) ? " (at the table)" : " (away)"))));
  fill(document.getElementById("presence"), ...list.filter(([name]) => present.has(name)).map(([name, role]) =>
    h("li", { title: `${name} is at the table` }, h("span", { class: "dot", "aria-hidden": "true" }), name, role === "gm" ? h("span", { class: "gm-tag" }, " GM") : null)));
  renderChatOptions();
  const owner = document.getElementById("char-owner");
  if (owner) {
    const current = owner.value || me.username;
    fill(owner, ...list.filter(([, role]) => role !== "spectator").map(([name]) =>
      h("option", { value: name, selected: name === current }, name === me.username ? `${name} (you: an NPC)` : name)));
    charFormShown();
  }
}

function renderSession() {
  document.getElementById("session-status").textContent = session
    ? `Session ${session}${scene ? `, scene ${scene}${sceneName ? `: ${sceneName}` : ""}` : ", between scenes"}`
    : "No session running";
  const allowed = {
    start_session: !session, start_scene: !!session && !scene, end_scene: !!scene, end_session: !!session && !scene,
  };
  for (const button of document.querySelectorAll("[data-command]")) button.disabled = !allowed[button.dataset.command];
  const nextName = document.getElementById("scene-name");
  if (nextName) nextName.disabled = !allowed.start_scene;
  // A greyed-out "End session" said nothing of why: a session ends between scenes.
  const why = session && scene ? `End scene ${scene} first.` : "";
  const hint = document.getElementById("session-hint");
  if (hint) hint.textContent = why;
  const endSession = document.querySelector('[data-command="end_session"]');
  if (endSession) endSession.title = why;
}

for (const button of document.querySelectorAll("[data-command]")) {
  button.addEventListener("click", async () => {
    const err = document.getElementById("gm-error");
    err.textContent = "";
    try {
      const action = { type: button.dataset.command };
      // A scene may have a name (campaign/actions/sessions.py): the header and the log say it.
      const sceneName = document.getElementById("scene-name");
      if (action.type === "start_scene" && sceneName.value.trim()) action.name = sceneName.value.trim();
      await sendCommand(action);
      if (action.type === "start_scene") sceneName.value = "";
    } catch (problem) {
      err.textContent = problem.message;
    }
  });
}

// --- forms: dice, members, new characters ----------------------------------------------------

// The dice box (./dicebox.js): its form and its "For" list, which follows the characters.
const diceBox = setUpDiceBox({ isGM, sendCommand });

// --- talking: messages and whispers (./chat.js) -------------------------------------------------

const chat = setUpChat({ me, isGM, members, characters: () => orderedCharacters().filter(canAct), sendCommand });
function renderChatOptions() { chat.renderOptions(); }

const memberForm = document.getElementById("member-form");
if (memberForm) {
  memberForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    const out = document.getElementById("member-error");
    out.textContent = "";
    out.className = "error";
    try {
      await sendCommand({ type: "add_member", username: memberForm.username.value.trim(), role: memberForm.role.value });
      out.className = "ok";
      out.textContent = `${memberForm.username.value.trim()} is at the table now.`;
      memberForm.username.value = "";
    } catch (problem) {
      out.textContent = problem.message;
    }
  });
}

let pendingCreation = null;
let charFormShown = () => {}; // shows "What the players see" when the GM's own character (an NPC) is chosen
const charForm = document.getElementById("char-form");
if (charForm) setUpCharacterForm(charForm);

function setUpCharacterForm(form) {
  // The sheet as a form built from the system's example sheet (its shape) and, where the system
  // declares its sheet (rules/declare.py SheetSpec), the declared labels, choices and limits,
  // checked as the player types. Lists (WYRM skills) and named entries (Tale skills, MdT
  // specializations) get rows to add and remove. The JSON under "Advanced" is the same sheet,
  // kept in step both ways, for anything the form does not show.
  const textarea = form.sheet;
  const fieldsEl = document.getElementById("char-fields");
  let sheet = JSON.parse(JSON.stringify(data.exampleSheet));
  const declaredSheet = new Map((declared.sheet?.fields || []).map((f) => [f.name, f]));
  const declaredAt = (path) => {
    let field = declaredSheet.get(path[0]);
    for (const key of path.slice(1)) field = field?.fields?.find?.((f) => f.name === key) || (field?.item?.fields || []).find?.((f) => f.name === key) || (typeof key === "number" ? field?.item || field : null);
    return field || null;
  };
  const idFor = (path) => `sheet-${path.join("-").replace(/\W+/g, "_")}`;
  // In a row of a list or of named entries, "name" is the entry's: "Skill", not a second "Name".
  const singular = (text) => text.replace(/ies$/, "y").replace(/s$/, "");
  const labelFor = (path) => declaredAt(path)?.label || (path.length > 2 && path[path.length - 1] === "name"
    ? singular(cap(words(String(path[0])))) : cap(words(String(path[path.length - 1]))));
  const writeJSON = () => { textarea.value = JSON.stringify(sheet, null, 2); };
  const setAt = (path, value) => {
    let obj = sheet;
    for (const k of path.slice(0, -1)) obj = obj[k];
    obj[path[path.length - 1]] = value;
    writeJSON();
  };
  const blank = (value) => (typeof value === "number" ? 0 : typeof value === "string" ? "" : Array.isArray(value) ? []
    : value && typeof value === "object" ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, blank(v)])) : value);

  function input(path, value, label = labelFor(path)) {
    const id = idFor(path);
    const d = declaredAt(path);
    const error = h("span", { class: "field-error", id: `${id}-error` });
    let control;
    if (d?.kind === "choice") {
      control = h("select", { id, "aria-describedby": error.id },
        d.choices.map((c) => h("option", { value: c.value, selected: c.value === value }, c.label)));
      control.addEventListener("change", () => setAt(path, control.value));
    } else if (Array.isArray(value)) { // a list of words: comma-separated
      control = h("input", { id, value: value.join(", "), "aria-describedby": error.id });
      control.addEventListener("input", () => setAt(path, control.value.split(",").map((x) => x.trim()).filter(Boolean)));
    } else {
      const number = typeof value === "number";
      control = h("input", { id, type: number ? "number" : "text", value, class: number ? "num" : "", step: number ? 1 : undefined,
        min: d?.min, max: d?.max, maxlength: d?.maxLength, required: number || d?.required ? true : undefined, "aria-describedby": error.id });
      control.addEventListener("input", () => {
        error.textContent = limitProblem(control);
        control.setAttribute("aria-invalid", error.textContent ? "true" : "false");
        setAt(path, number ? (control.value === "" ? null : Number(control.value)) : control.value);
        checkSheet();
      });
    }
    return h("div", { class: "field" }, h("label", { for: id }, label), control, error);
  }

  function rows(path, entries, named) {
    // entries: [[key, value]]; named: the key is a name the player types (an object's entries)
    const list = h("div", { class: "sheet-rows" });
    entries.forEach(([key, value], i) => {
      const at = [...path, key];
      const parts = [];
      if (named) {
        const nameId = `${idFor(at)}-name`;
        const nameError = h("span", { class: "field-error", id: `${nameId}-error` });
        const name = h("input", { id: nameId, class: "entry-name", value: key, required: true, "aria-describedby": nameError.id });
        name.addEventListener("change", () => {
          const obj = path.reduce((o, k) => o[k], sheet);
          const wanted = name.value.trim() || key;
          // A name is one entry's (the rules read names without regard to case): renamed as another,
          // the two would become one and a rating would be lost without a word.
          if (Object.keys(obj).some((k) => k !== key && k.toLowerCase() === wanted.toLowerCase())) {
            nameError.textContent = `Another ${singular(labelFor(path)).toLowerCase()} is named ${wanted}: give this one its own name.`;
            name.setAttribute("aria-invalid", "true");
            name.value = key;
            return;
          }
          const renamed = Object.fromEntries(Object.entries(obj).map(([k, v]) => [k === key ? wanted : k, v]));
          setAt(path, renamed);
          renderFields();
        });
        // "Skill name": Tale's sheet has a characteristic called Skill too (its own word, in the
        // characteristics above), and the two fields said "Skill" alike.
        parts.push(h("div", { class: "field" }, h("label", { for: nameId }, `${singular(labelFor(path))} name`), name, nameError));
      }
      if (value && typeof value === "object" && !Array.isArray(value)) {
        for (const [k, v] of Object.entries(value)) parts.push(input([...at, k], v));
      } else {
        parts.push(input(at, value, named ? "Value" : labelFor(at)));
      }
      parts.push(h("button", { type: "button", class: "small secondary", "aria-label": `Remove ${named ? key : `${labelFor(path)} ${i + 1}`}`, onclick: () => {
        const obj = path.reduce((o, k) => o[k], sheet);
        if (Array.isArray(obj)) obj.splice(i, 1); else delete obj[key];
        writeJSON();
        renderFields();
      } }, "Remove"));
      list.append(h("div", { class: "sheet-row" }, parts));
    });
    const template = entries.length ? entries[0][1] : (named ? 0 : "");
    list.append(h("button", { type: "button", class: "small secondary", onclick: () => {
      const obj = path.reduce((o, k) => o[k], sheet);
      if (Array.isArray(obj)) obj.push(blank(template));
      else { // "New specialization", "New specialization 2": each its own name, saying what it is
        const base = `New ${singular(labelFor(path)).toLowerCase()}`;
        let n = 1;
        const taken = (text) => Object.keys(obj).some((k) => k.toLowerCase() === text.toLowerCase());
        while (taken(n === 1 ? base : `${base} ${n}`)) n += 1;
        obj[n === 1 ? base : `${base} ${n}`] = blank(template);
      }
      writeJSON();
      renderFields();
      list.parentElement?.querySelector(".sheet-row:last-of-type input")?.focus();
    } }, `Add ${named ? "an entry to" : "a row to"} ${labelFor(path)}`));
    return list;
  }

  function renderFields() {
    const parts = [];
    for (const [key, value] of Object.entries(sheet)) {
      const path = [key];
      const isObject = value && typeof value === "object" && !Array.isArray(value);
      // Entries the player names (a declared group without fields: MdT specializations, Tale skills)
      // stay so however many there are: three numbers read as a fixed set of ratings ("New 1").
      const named = declaredAt(path)?.kind === "group" && !declaredAt(path).fields?.length;
      if (typeof value !== "object" || value === null || (Array.isArray(value) && value.every((v) => typeof v !== "object"))) {
        parts.push(input(path, value));
      } else if (Array.isArray(value)) {
        parts.push(h("fieldset", { class: "sheet-group wide" }, h("legend", null, labelFor(path)), rows(path, value.map((v, i) => [i, v]), false)));
      } else if (isObject && !named && Object.values(value).every((v) => typeof v === "number") && Object.keys(value).length > 2) {
        // a fixed set of ratings (attributes, skills): one number each
        parts.push(h("fieldset", { class: "sheet-group" }, h("legend", null, labelFor(path)),
          // Named as the sheet names them ("Warrior", "Intelligence"), not as the key is stored ("warrior").
          Object.entries(value).map(([k, v]) => input([key, k], v, cap(words(k))))));
      } else {
        // named entries the player chooses (specializations, Tale skills)
        parts.push(h("fieldset", { class: "sheet-group wide" }, h("legend", null, labelFor(path)), rows(path, Object.entries(value), true)));
      }
    }
    fill(fieldsEl, ...parts);
    checkSheet();
  }

  const submitButton = form.querySelector("button[type=submit]");
  function checkSheet() {
    const bad = [...fieldsEl.querySelectorAll("input")].some((el) => limitProblem(el));
    submitButton.disabled = bad;
  }

  // What the players see is asked of the GM's own character only: an NPC (a player's is always seen).
  // A quick NPC (the GM's own, "quick": rules/npc.py) needs no sheet: the fields and the JSON step aside.
  const quick = () => (form.quick && form.owner?.value === me.username ? form.quick.value : "");
  const advanced = form.querySelector("details.advanced");
  // What speaks of the fields (the example sheet, its creation limits) steps aside with them.
  const aboutFields = ["char-example-help", "char-override-field"].map((id) => document.getElementById(id)).filter(Boolean);
  const showQuick = () => {
    fieldsEl.hidden = advanced.hidden = !!quick();
    for (const el of aboutFields) el.hidden = !!quick();
    if (quick()) submitButton.disabled = false; else checkSheet();
  };
  const showNpcField = () => {
    const field = document.getElementById("char-shown-field");
    if (field && form.owner) field.hidden = form.owner.value !== me.username;
    showQuick();
  };
  form.owner?.addEventListener("change", showNpcField);
  form.quick?.addEventListener("change", showQuick);
  charFormShown = showNpcField;

  writeJSON();
  renderFields();
  textarea.addEventListener("input", () => {
    try { sheet = JSON.parse(textarea.value); } catch { return; }
    if (sheet && typeof sheet === "object") renderFields();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const err = document.getElementById("char-error");
    err.textContent = "";
    err.className = "error";
    let sheet;
    try {
      sheet = JSON.parse(textarea.value || "{}");
    } catch (problem) {
      err.textContent = `The sheet is not valid JSON: ${problem.message}`;
      return;
    }
    const action = { type: "create_character", name: form.name.value.trim(), sheet };
    if (form.owner && form.owner.value && form.owner.value !== me.username) action.owner = form.owner.value;
    else if (form.owner) Object.assign(action, { npc: true, shown: form.shown.value }); // the GM's own: an NPC
    if (quick()) { delete action.sheet; action.quick = { template: quick() }; }
    else if (form.override_limits?.checked) action.override_limits = true; // the GM's (a quick NPC is past them anyway)
    pendingCreation = action.name;
    try {
      await sendCommand(action);
      err.className = "ok";
      err.textContent = `${action.name} is at the table.`;
      form.name.value = "";
      if (form.override_limits) form.override_limits.checked = false; // each time on purpose
      document.getElementById("new-char").open = false;
    } catch (problem) {
      pendingCreation = null;
      err.textContent = problem.message;
    }
  });
}

// --- keyboard ------------------------------------------------------------------------------

const keysDialog = document.getElementById("keys");
document.getElementById("keys-button").addEventListener("click", () => keysDialog.showModal());

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
  const t = e.target;
  const typing = t.closest?.("input, textarea, select, [contenteditable], dialog");
  if (e.key === "Escape" && composer && !typing) { closeComposer(true); return; }
  if (typing) return;
  if (e.key === "/") { e.preventDefault(); focusInPanel(document.getElementById("notation")); }
  else if (e.key === "t") { e.preventDefault(); focusInPanel(document.getElementById("chat-text")); }
  else if (e.key === "?") { e.preventDefault(); keysDialog.showModal(); }
  else if (e.key === "[") stepCharacter(-1);
  else if (e.key === "]") stepCharacter(1);
  else if (e.key === "l") { e.preventDefault(); logEl.focus(); }
  else if (e.key === "n") {
    const buttons = [...document.querySelectorAll("#log button.roll-now:not(:disabled)")];
    const newest = buttons[buttons.length - 1];
    if (newest) { e.preventDefault(); newest.focus(); newest.click(); }
  } else if (/^[1-9]$/.test(e.key)) {
    const button = document.querySelector(`#sheet-wrap button[data-key="${e.key}"]`);
    if (button) { e.preventDefault(); button.click(); }
  }
});

// --- start ---------------------------------------------------------------------------------

// For tests and the curious: window.talekeeperTable.lastSeq, .drop() closes the socket.
window.talekeeperTable = {
  get lastSeq() { return lastSeq; },
  get socket() { return socket; },
  chain,
  drop() { socket?.close(); },
  get alertsPlayed() { return alertsPlayed; },
  sheetSeq(id) { return chars.get(id)?.seq || 0; }, // the seq of the sheet the page shows for a character
  seqs() { return [...logEl.querySelectorAll(":scope > li[data-seq]")].map((li) => Number(li.dataset.seq)); },
};

fitLog(document.querySelector(".log-panel"));
setUpAlerts();
const onEncounterEvent = setUpEncounter({
  data, chars, me, isGM, canAct, sendCommand, selectCharacter, announce: (text) => { liveEl.textContent = text; },
});
const onFightEvent = setUpFight({ data, chars, me, isGM, canAct, sendCommand, events, notice });
renderMembers();
renderSession();
renderCharacters();
if (data.needsCharacter) landOn(document.getElementById("new-char"), document.getElementById("char-name"));
chain.start(lastSeq);
connect();
loadReceipts();
