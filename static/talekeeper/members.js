// The members and the session: who is at the table (and the log's head each one's browser
// verified), the session and scene running, the GM's buttons that start and end them, and the
// GM's form that adds a member.
//
// Owns nothing: members, presence and the session are in state, changed by the log and the socket.

import { h, fill } from "./ui.js";
import { short } from "./chain.js";
import { sendCommand } from "./commands.js";
import { sessionCommands, sessionLine } from "./format.js";
import { parts, state } from "./state.js";

export function renderMembers() {
  const { members, present, memberHeads, me } = state;
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
  parts.chat.renderOptions();
  const owner = document.getElementById("char-owner");
  if (owner) {
    const current = owner.value || me.username;
    fill(owner, ...list.filter(([, role]) => role !== "spectator").map(([name]) =>
      h("option", { value: name, selected: name === current }, name === me.username ? `${name} (you: an NPC)` : name)));
    parts.charForm.shown();
  }
}

export function renderSession() {
  document.getElementById("session-status").textContent = sessionLine(state.session, state.scene, state.sceneName);
  const { allowed, why } = sessionCommands(state.session, state.scene);
  for (const button of document.querySelectorAll("[data-command]")) button.disabled = !allowed[button.dataset.command];
  const nextName = document.getElementById("scene-name");
  if (nextName) nextName.disabled = !allowed.start_scene;
  const hint = document.getElementById("session-hint");
  if (hint) hint.textContent = why;
  const endSession = document.querySelector('[data-command="end_session"]');
  if (endSession) endSession.title = why;
}

// The GM bar's buttons (start and end the session and scenes) and the form that adds a member.
export function setUpSession() {
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
}
