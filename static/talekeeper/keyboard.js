// The table's keys (the dialog under "Keys ?" lists them): / the dice box, t the chat, [ and ] the
// characters, l the log, n the newest "Roll now", 1-9 the sheet's first nine actions, Esc closes
// the action form. None while typing in a field.

import { focusInPanel } from "./layout.js";
import { closeComposer } from "./composer.js";
import { stepCharacter } from "./sheets.js";
import { state } from "./state.js";

export function setUpKeys() {
  const logEl = document.getElementById("log");
  const keysDialog = document.getElementById("keys");
  document.getElementById("keys-button").addEventListener("click", () => keysDialog.showModal());

  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.defaultPrevented) return;
    const t = e.target;
    const typing = t.closest?.("input, textarea, select, [contenteditable], dialog");
    if (e.key === "Escape" && state.composer && !typing) { closeComposer(true); return; }
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
}
