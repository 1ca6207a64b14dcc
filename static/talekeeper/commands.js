// Commands, previews and other requests to the server: a command over the socket when it is up, else
// over HTTP with the same id, resent with that id while its outcome is in doubt.
//
// Owns nothing of its own: the commands in flight on the socket are state.pending (the socket's
// answers settle them, socket.js).

import { expectResult, notice } from "./result.js";
import { state } from "./state.js";

// The command id is an input to the command's dice (docs/fair-dice.md): random, chosen here,
// and reused by a retry (which so gets the same dice). getRandomValues works on http too.
export function newId() {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function postJSON(url, body, timeoutMs = 0) {
  const res = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": state.csrf },
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
  let signature = await state.trust.sign(id, action); // waits for this device's key to be registered
  let doubted = false; // an earlier try may be stored
  for (let attempt = 0, resigned = 0; ; attempt += 1) {
    let ack;
    try {
      ack = await deliver(id, action, signature);
    } catch (problem) {
      // Signed for a session that is no longer the current one: nothing was stored; sign again under a
      // NEW id, drawn after the new commitment (an id is never sent into another session).
      if (resigned < 3 && state.trust.refused(problem)) {
        resigned += 1;
        id = newId();
        signature = await state.trust.sign(id, action);
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
    state.chain.ownCommand(ack.seq, id, action); // the dice keyed on the id sent, for the action sent
    if (show) expectResult(ack.seqs?.length ? ack.seqs : [ack.seq], show, action.visibility || "public");
    return ack;
  }
}

function deliver(id, action, signature) {
  const envelope = signature ? { id, action, signature } : { id, action };
  const { socket, pending } = state;
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
  return postJSON(`/api/campaigns/${state.slug}/commands`, envelope, ANSWER_WITHIN_MS).then(({ ok, status, json }) => {
    if (ok) return { seq: json.seq, seqs: (json.events || []).map((e) => e.seq) };
    const code = json.error?.code || (status >= 500 ? "server_error" : "refused");
    throw { code, message: json.error?.message || "The server refused that; nothing was stored." };
  }, () => {
    throw { code: "no_answer", message: "The server can't be reached." };
  });
}

export async function preview(action) {
  try {
    const { ok, status, json } = await postJSON(`/api/campaigns/${state.slug}/preview`, { action });
    if (!ok) return { error: json.error?.message || `No odds (${status}).` };
    return { odds: json.odds };
  } catch {
    return { error: "No odds: the server can't be reached." };
  }
}
