// "Waiting for you": the list at the top of the page, the title's count, a sound and a desktop
// notification. Worked out from the log like everything else: an event waits for this member while
// its follow-ups offer them a primary button (follow.js waitsForMe). The list repeats those buttons
// at the top of the page, so a GM reading another sheet (or a player on a phone) sees them.
//
// Owns the waiting list (waiting.js WaitingList) and this browser's alert choices (localStorage).

import { h, fill } from "./ui.js";
import { describe } from "./describe.js";
import { textOf } from "./format.js";
import { press } from "./press.js";
import { showInLog } from "./result.js";
import { state } from "./state.js";
import { WaitingList, titleWith } from "./waiting.js";

const waitingEl = document.getElementById("waiting");
const waitingListEl = document.getElementById("waiting-list");
const baseTitle = document.title;
const ALERTS_KEY = "talekeeper.alerts"; // {sound: bool, desktop: bool}, per browser, every campaign
const alertPrefs = (() => { try { return JSON.parse(localStorage.getItem(ALERTS_KEY)) || {}; } catch { return {}; } })();
let waiting = null; // the WaitingList, from setUpAlerts on
let followNodes = () => []; // an event's follow-ups (follow.js), fresh for the list
let alertsPlayed = 0;
let waitingTimer = null;
let audio = null;

export const alertsCount = () => alertsPlayed;

export function setWaiting(ev, yes) {
  if (!waiting?.set(ev.seq, yes)) return;
  clearTimeout(waitingTimer);
  waitingTimer = setTimeout(renderWaiting, 0); // once per batch of events
}

function renderWaiting() {
  if (press.holds()) { press.hold(renderWaiting, renderWaiting); return; } // it sits above the log: it would move the button
  const list = waiting.list(state.events);
  document.title = titleWith(list.length, baseTitle);
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
  const fresh = waiting.toAnnounce(list);
  if (fresh) announce(fresh);
}

function announce(ev) {
  const text = `${ev.character_name ? `${ev.character_name}: ` : ""}${textOf(describe(ev).text)}`;
  if (alertPrefs.sound) beep();
  if (alertPrefs.desktop && window.Notification?.permission === "granted" && document.visibilityState !== "visible") {
    try {
      const n = new Notification(`${state.data.name || baseTitle}: waiting for you`, { body: text, tag: `talekeeper-${state.slug}-${ev.seq}` });
      n.onclick = () => { window.focus(); showInLog(ev.seq); };
    } catch { /* some browsers only notify from a service worker: the list and the title still show it */ }
  }
}

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

// `nodesFor(ev)`: the follow-ups of an event (follow.js followNodes), which the list repeats.
export function setUpAlerts({ nodesFor }) {
  waiting = new WaitingList(state.pageHead);
  followNodes = nodesFor;
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
