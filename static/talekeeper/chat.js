// Talking at the table: messages and whispers, events like every other (docs/table.md#chat).
// The form says who will read what it sends: its button names them ("Send to everyone", "Send to
// bob and the GM": the GM reads every whisper), and after a whisper the ticks are cleared, so the
// next message is not a whisper by accident.
import { h, fill } from "./ui.js";

export const CHAT_MAX = 2000;

// The words of the Send button for these recipients, as the sender reads it.
export function sendLabel(to, { isGM, members }) {
  if (!to.length) return "Send to everyone";
  const names = to.map((name) => (members.get(name) === "gm" ? `${name} (GM)` : name));
  // The GM reads every whisper: a player's whisper that names no GM says so.
  if (!isGM && !to.some((name) => members.get(name) === "gm")) names.push("the GM");
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
  return `Send to ${list}`;
}

export function setUpChat({ me, isGM, members, characters, sendCommand }) {
  const form = document.getElementById("chat-form");
  const button = form.querySelector("button[type=submit]");
  const count = document.getElementById("chat-count");
  const toEl = document.getElementById("chat-to");
  const ticked = () => [...toEl.querySelectorAll("input:checked")].map((i) => i.value);

  function limits() {
    const text = form.text.value.trim();
    count.textContent = `${text.length} / ${CHAT_MAX}`;
    count.classList.toggle("bad-text", text.length > CHAT_MAX);
    count.hidden = text.length < CHAT_MAX * 0.9; // said near the limit, where it matters
    // Sending waits for something to send, and never more than the server takes.
    button.disabled = !text || text.length > CHAT_MAX;
    button.textContent = sendLabel(ticked(), { isGM, members });
  }

  // "As" lists the characters the member may speak for; "Whisper to" every other member.
  function renderOptions() {
    const as = form.as;
    const current = as.value;
    fill(as, as.options[0], ...characters().map((c) =>
      h("option", { value: c.id, selected: String(c.id) === current }, `${c.name} (in character)`)));
    const keep = new Set(ticked());
    const names = [...members.keys()].filter((name) => name !== me.username).sort();
    fill(toEl, toEl.querySelector("legend"), ...names.map((name) => h("label", { class: "check", for: `chat-to-${name}` },
      h("input", { type: "checkbox", id: `chat-to-${name}`, value: name, checked: keep.has(name) }), ` ${name}`,
      members.get(name) === "gm" ? " (GM)" : "")));
    limits();
  }

  form.addEventListener("input", limits);
  form.addEventListener("change", limits);
  // Esc leaves the box (the page's keys work again); what was typed stays.
  form.text.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); form.text.blur(); }
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const err = document.getElementById("chat-error");
    err.textContent = "";
    const text = form.text.value.trim();
    if (!text) { err.textContent = "Write something first."; return; }
    if (text.length > CHAT_MAX) { err.textContent = `A message is at most ${CHAT_MAX} characters.`; return; }
    const action = { type: "post_message", text };
    if (form.as.value) Object.assign(action, { kind: "ic", character: Number(form.as.value) });
    const to = ticked();
    if (to.length) action.to = to;
    button.disabled = true;
    try {
      await sendCommand(action, { show: "log" });
      form.text.value = "";
      for (const box of toEl.querySelectorAll("input:checked")) box.checked = false; // a whisper is one message's
    } catch (problem) {
      err.textContent = problem.message;
    } finally {
      limits();
      form.text.focus({ preventScroll: true });
    }
  });
  limits();
  return { renderOptions };
}
