// The live table: one socket, the log rendered in seq order, exactly once.
//
// The page remembers the last seq it showed; on every (re)connect it asks for
// the events after it, so a dropped socket catches up with no gap and no
// duplicate. Anything at or below the last seq shown is ignored.

const root = document.getElementById("table");
const slug = root.dataset.slug;
const logEl = document.getElementById("log");
const connEl = document.getElementById("conn");
const olderBtn = document.getElementById("older");
const RECENT = 200; // events shown on load; earlier ones on demand

let lastSeq = Math.max(0, Number(root.dataset.head) - RECENT);
let firstShown = lastSeq + 1;
let socket = null;
let retry = 0;
const pending = new Map(); // client command id -> {onAck, onError}

function setConn(state, text) {
  connEl.dataset.state = state;
  connEl.textContent = text;
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws/campaigns/${slug}/table/?after=${lastSeq}`);
  setConn("connecting", "Connecting…");
  socket.onmessage = (msg) => handle(JSON.parse(msg.data));
  socket.onclose = (ev) => {
    if (ev.code >= 4400 && ev.code < 4500) {
      setConn("closed", "Refused by the server: reload the page.");
      return;
    }
    const delay = Math.min(10000, 500 * 2 ** retry) * (0.5 + Math.random() / 2);
    retry += 1;
    setConn("offline", `Offline: reconnecting in ${Math.ceil(delay / 1000)} s…`);
    setTimeout(connect, delay);
  };
}

function handle(frame) {
  switch (frame.type) {
    case "event":
      if (frame.event.seq <= lastSeq) return; // already shown
      if (frame.event.seq !== lastSeq + 1) { socket.close(); return; } // gap: reconnect and catch up
      render(frame.event, false);
      lastSeq = frame.event.seq;
      afterEvent(frame.event);
      break;
    case "ready":
      retry = 0;
      setConn("online", "Live");
      olderBtn.hidden = firstShown <= 1;
      break;
    case "heartbeat":
      if (frame.seq > lastSeq) socket.close(); // we missed something: reconnect from lastSeq
      break;
    case "ack": {
      const p = pending.get(frame.id);
      pending.delete(frame.id);
      if (p) p.onAck(frame);
      break;
    }
    case "error": {
      const p = pending.get(frame.id);
      pending.delete(frame.id);
      if (p) p.onError(frame);
      else setConn("error", frame.message);
      break;
    }
  }
}

function text(tag, content, cls) {
  const el = document.createElement(tag);
  el.textContent = content;
  if (cls) el.className = cls;
  return el;
}

function describe(ev) {
  const p = ev.payload || {};
  if (ev.hidden) return "rolled in secret";
  switch (ev.type) {
    case "roll": {
      const parts = p.terms.map((t) => t.constant !== undefined ? `${t.sign < 0 ? "−" : "+"}${t.constant}`
        : `${t.sign < 0 ? "−" : ""}${t.text.replace(/^[+-]/, "")} [${t.dice.map((d) => d.kept === false ? `(${d.face})` : `${d.face}${d.exploded ? "!" : ""}`).join(", ")}]`);
      return `rolled ${p.notation}${p.label ? ` (${p.label})` : ""}: ${parts.join(" ")} = ${p.total}${p.counts_successes ? " successes" : ""}`;
    }
    case "campaign_created": return `created the campaign (${p.system})`;
    case "member_joined": return `${p.username} joined as ${p.role}`;
    case "character_created": return `created the character ${p.name}`;
    case "session_started": return `started session ${p.session}`;
    case "session_ended": return `ended session ${p.session}`;
    case "scene_started": return `started scene ${p.scene}`;
    case "scene_ended": return `ended scene ${p.scene}`;
    default: {
      const outcome = p.outcome ? `: ${p.outcome}` : "";
      const total = p.total !== undefined ? ` (total ${p.total})` : "";
      return `${ev.type.replaceAll("_", " ")}${outcome}${total}`;
    }
  }
}

function render(ev, prepend) {
  const li = document.createElement("li");
  li.className = `event ev-${ev.type}${ev.hidden ? " hidden-roll" : ""}`;
  li.dataset.seq = ev.seq;
  li.id = `seq-${ev.seq}`;
  const who = ev.character_name ? `${ev.character_name} (${ev.actor})` : (ev.actor || "system");
  li.append(text("span", `#${ev.seq}`, "seq"), text("strong", who, "who"), text("span", " " + describe(ev), "what"));
  if (ev.visibility && ev.visibility !== "public") li.append(text("span", ev.visibility === "gm" ? "GM only" : "secret", "badge"));
  const time = text("time", new Date(ev.created_at).toLocaleTimeString(), "muted small");
  time.dateTime = ev.created_at;
  li.append(time);
  if (prepend) logEl.prepend(li);
  else {
    const nearBottom = logEl.scrollHeight - logEl.scrollTop - logEl.clientHeight < 80;
    logEl.append(li);
    if (nearBottom) logEl.scrollTop = logEl.scrollHeight;
  }
}

async function afterEvent(ev) {
  if (ev.character) refreshCharacter(ev.character);
  if (["character_created", "member_joined"].includes(ev.type)) {
    // New names at the table: the side panel is server-rendered, so refresh it quietly.
    const res = await fetch(location.href, { credentials: "same-origin" });
    if (!res.ok) return;
    const doc = new DOMParser().parseFromString(await res.text(), "text/html");
    for (const id of ["characters", "roll-character"]) {
      const fresh = doc.getElementById(id);
      const here = document.getElementById(id);
      if (fresh && here) here.innerHTML = fresh.innerHTML;
    }
  }
}

async function refreshCharacter(id) {
  const el = document.querySelector(`[data-state-for="${id}"]`);
  if (!el) return;
  const res = await fetch(`/api/campaigns/${slug}/characters/${id}`, { credentials: "same-origin" });
  if (res.ok) el.textContent = JSON.stringify((await res.json()).state, null, 1);
}

olderBtn.addEventListener("click", async () => {
  const after = Math.max(0, firstShown - 1 - RECENT);
  const res = await fetch(`/api/campaigns/${slug}/events?after=${after}&limit=${firstShown - 1 - after}`, { credentials: "same-origin" });
  if (!res.ok) return;
  const page = (await res.json()).events;
  for (const ev of page.reverse()) render(ev, true);
  firstShown = after + 1;
  olderBtn.hidden = firstShown <= 1;
});

export function sendCommand(action) {
  return new Promise((resolve, reject) => {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      reject({ message: "Not connected: wait for the table to reconnect." });
      return;
    }
    const id = crypto.randomUUID ? crypto.randomUUID() : `${Date.now()}-${Math.random().toString(36).slice(2)}`;
    pending.set(id, { onAck: resolve, onError: reject });
    socket.send(JSON.stringify({ type: "command", id, action }));
  });
}

const form = document.getElementById("roll-form");
if (form) {
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const err = document.getElementById("roll-error");
    err.textContent = "";
    const action = { type: "roll", notation: form.notation.value, visibility: form.visibility.value };
    if (form.character.value) action.character = Number(form.character.value);
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      await sendCommand(action);
    } catch (problem) {
      err.textContent = problem.message;
    } finally {
      button.disabled = false;
      form.notation.focus();
    }
  });
}

for (const button of document.querySelectorAll("[data-command]")) {
  button.addEventListener("click", async () => {
    const err = document.getElementById("gm-error");
    err.textContent = "";
    try {
      await sendCommand({ type: button.dataset.command });
    } catch (problem) {
      err.textContent = problem.message;
    }
  });
}

connect();
