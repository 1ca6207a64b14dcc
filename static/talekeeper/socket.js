// The socket and its resume protocol: one socket to the table; on every (re)connect it asks for
// the events after the last one shown (state.lastSeq), so a dropped socket catches up with no gap
// and no duplicate. A gap or a heartbeat ahead of the page reconnects; a refusal (44xx) stops; any
// other close is tried again with a jittered backoff, counting down in the header.
//
// Owns the reconnection (its timers and attempt count), the last frame's time and the head this
// page last reported to the others. The socket itself is state.socket (commands.js sends on it).

import { h, fill } from "./ui.js";
import { parseJSON } from "./chain.js";
import { updateFollow, updateFollowUps } from "./follow.js";
import { showEvent, showOlder } from "./log.js";
import { flushWitnessing } from "./witnessing.js";
import { renderMembers } from "./members.js";
import { notice } from "./result.js";
import { rosterAgainIfMissed } from "./sheets.js";
import { state } from "./state.js";

const root = document.getElementById("table");
const connEl = document.getElementById("conn");
const reconnectBtn = document.getElementById("reconnect");
let retry = 0;
let retryTimer = null;
let retryAt = 0; // when the next reconnect attempt starts (the offline status counts down to it)
let countdownTimer = null;
let lastFrameAt = Date.now();
let reportedHead = null; // what this socket last told the others (presence carries it)

function setConn(conn, text) {
  connEl.dataset.state = conn;
  fill(connEl, text);
  reconnectBtn.hidden = conn !== "offline";
  root.dataset.conn = conn;
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

function connect() {
  clearTimeout(retryTimer);
  clearTimeout(countdownTimer);
  retryTimer = null;
  const old = state.socket;
  if (old) {
    old.onmessage = old.onclose = null;
    try { old.close(); } catch { /* already closed */ }
  }
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  reportedHead = null; // a new socket is a new presence: report again
  const ws = new WebSocket(`${scheme}://${location.host}/ws/campaigns/${state.slug}/table/?after=${state.lastSeq}`);
  state.socket = ws;
  setConn("connecting", retry ? "Reconnecting…" : "Connecting…");
  ws.onmessage = (msg) => {
    lastFrameAt = Date.now();
    handle(parseJSON(msg.data));
  };
  ws.onclose = (ev) => {
    if (state.socket !== ws) return;
    const { pending } = state;
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

// Tell the table which head this browser verified, so members shown different logs find out.
function reportHead() {
  const head = state.chain.head;
  const { socket } = state;
  if (!head || !socket || socket.readyState !== WebSocket.OPEN) return;
  if (reportedHead && reportedHead.seq === head.seq && reportedHead.hash === head.hash) return;
  reportedHead = head;
  socket.send(JSON.stringify({ type: "head", head: { seq: head.seq, hash: head.hash } }));
}

function handle(frame) {
  const { chain, socket, pending } = state;
  switch (frame.type) {
    case "event":
      if (frame.event.seq <= state.lastSeq) return; // already shown
      if (frame.event.seq !== state.lastSeq + 1) { socket.close(); return; } // gap: reconnect and catch up
      state.lastSeq = frame.event.seq;
      chain.event(frame.event);
      showEvent(state.asNow(frame.event), frame.sheets);
      break;
    case "ready":
      chain.serverHead(frame.head, { ends: true }).then(reportHead);
      retry = 0;
      setConn("online", "Live");
      rosterAgainIfMissed();
      showOlder();
      if (state.loading) {
        state.loading = false;
        for (const id of state.charEvents.keys()) updateFollowUps(id);
        const turn = document.getElementById(`seq-${state.lastEncounterSeq}`);
        if (turn) updateFollow(turn, state.events.get(state.lastEncounterSeq));
        flushWitnessing(); // the rolls in the backlog still waiting for this member's table
      }
      break;
    case "heartbeat":
      if (frame.seq > state.lastSeq) socket.close(); // we missed something: reconnect from lastSeq
      chain.serverHead(frame.head).then(reportHead);
      break;
    case "pong":
      chain.serverHead(frame.head);
      break;
    case "presence":
      chain.memberHeads(frame.members, state.me.username);
      state.present = new Set(frame.members.map((m) => m.username));
      state.memberHeads = new Map(frame.members.filter((m) => m.head).map((m) => [m.username, m.head]));
      for (const m of frame.members) if (!state.members.has(m.username)) state.members.set(m.username, m.role);
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

// The page's connection: the buttons that need it follow it, the network's own news is heard, a quiet
// socket is replaced. Then the first connection.
export function setUpSocket() {
  new MutationObserver(syncRollButtons).observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ["disabled", "data-conn"] });
  reconnectBtn.addEventListener("click", () => { retry = Math.max(retry, 1); connect(); });
  window.addEventListener("online", () => { if (retryTimer) connect(); });
  // The browser says the network is gone: the socket may linger (Chromium keeps one open for a
  // while), but nothing sent on it arrives. The page says so at once and holds its buttons back,
  // instead of reading "Live" with every button on.
  window.addEventListener("offline", () => {
    const ws = state.socket;
    if (!ws || ws.readyState > WebSocket.OPEN) return;
    const lost = ws.onclose;
    ws.onmessage = ws.onclose = null;
    try { ws.close(); } catch { /* already closing */ }
    lost?.({ code: 1006 }); // as if it had closed: in-flight commands in doubt, the countdown to a new one
  });
  // A socket that went quiet (laptop asleep, proxy dropped it) is replaced: the server
  // sends a heartbeat every few seconds, so silence means the socket is dead.
  setInterval(() => {
    const { socket } = state;
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    const quiet = Date.now() - lastFrameAt;
    if (quiet > 45000) socket.close();
    else if (quiet > 20000) socket.send(JSON.stringify({ type: "ping" }));
  }, 5000);
  connect();
}

// For tests: the socket dropped as a network would drop it.
export function drop() { state.socket?.close(); }
