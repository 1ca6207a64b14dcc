// The live table: one socket, the log rendered in seq order, exactly once;
// the characters' sheets as their projections hold them; the actions each
// sheet allows, with exact odds before the roll; the GM's tools.
//
// This module only starts the page: it fills the table's state (state.js) from what the server
// put in the page, loads the rule system's table module, and sets up each part in order. Each
// concern is a module of its own; docs/table.md ("The page's modules") maps them.
//
// Everything that depends on the rule system lives in ./systems/<name>.js
// (render a sheet, list its actions, describe its events, offer follow-ups);
// docs/table.md describes that interface.

import { useVisibilities } from "./ui.js";
import { setUpAlerts, alertsCount } from "./alerts.js";
import { setUpCharacterForm } from "./charform.js";
import { setUpChat } from "./chat.js";
import { sendCommand } from "./commands.js";
import { setUpDiceBox } from "./dicebox.js";
import { setUpEncounter } from "./encounter.js";
import { setUpFight } from "./fight.js";
import { followNodes } from "./follow.js";
import { setUpKeys } from "./keyboard.js";
import { fitLog, landOn } from "./layout.js";
import { setUpOlder } from "./log.js";
import { loadReceipts, setUpLogCheck } from "./logcheck.js";
import { renderMembers, renderSession, setUpSession } from "./members.js";
import { listenForPresses } from "./press.js";
import { notice } from "./result.js";
import { orderedCharacters, renderCharacters, selectCharacter, setUpTabs } from "./sheets.js";
import { drop, setUpSocket } from "./socket.js";
import { canAct, initState, parts, state } from "./state.js";

const root = document.getElementById("table");
const data = JSON.parse(document.getElementById("table-data").textContent);
initState(data, root.dataset.csrf);
useVisibilities(data.visibilities || []);

try {
  state.system = await import(data.systemModule); // the release's own module (sessions/views.py, system_module)
} catch (problem) {
  console.warn(`No table module for ${data.system}; showing raw sheets.`, problem);
  state.system = await import("./systems/generic.js");
}

const { me, isGM, chars, events, members } = state;
setUpLogCheck();
listenForPresses(document);
setUpTabs();
setUpSession();
setUpOlder();
setUpKeys();
// The other parts of the page, each a module of its own with the table's pieces it needs.
parts.diceBox = setUpDiceBox({ isGM, sendCommand });
parts.chat = setUpChat({ me, isGM, members, characters: () => orderedCharacters().filter(canAct), sendCommand });
const charForm = document.getElementById("char-form");
parts.charForm = charForm ? setUpCharacterForm(charForm) : { shown() {} };

// For tests and the curious: window.talekeeperTable.lastSeq, .drop() closes the socket.
window.talekeeperTable = {
  get lastSeq() { return state.lastSeq; },
  get socket() { return state.socket; },
  get chain() { return state.chain; },
  drop,
  get alertsPlayed() { return alertsCount(); },
  sheetSeq(id) { return chars.get(id)?.seq || 0; }, // the seq of the sheet the page shows for a character
  seqs() { return [...document.querySelectorAll("#log > li[data-seq]")].map((li) => Number(li.dataset.seq)); },
};

fitLog(document.querySelector(".log-panel"));
setUpAlerts({ nodesFor: followNodes });
const liveEl = document.getElementById("log-live");
parts.encounter = setUpEncounter({
  data, chars, me, isGM, canAct, sendCommand, selectCharacter, announce: (text) => { liveEl.textContent = text; },
});
parts.fight = setUpFight({ data, chars, me, isGM, canAct, sendCommand, events, notice });
renderMembers();
renderSession();
renderCharacters();
if (data.needsCharacter) landOn(document.getElementById("new-char"), document.getElementById("char-name"));
state.chain.start(state.lastSeq);
setUpSocket();
loadReceipts();
