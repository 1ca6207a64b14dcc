// The dice box: any notation, a label, for which character, who sees it (docs/table.md, "dice box").
// Its "For" list follows the characters the member may act for (renderFor).
import { h, fill } from "./ui.js";

export function setUpDiceBox({ isGM, sendCommand }) {
  const rollForm = document.getElementById("roll-form");
  let rollForChosen = false; // the player picked "For" herself: her choice stands (renderFor)
  if (rollForm) {
    rollForm.character.addEventListener("change", () => { rollForChosen = true; });
    // A roll is in flight while its button is disabled (a second click is not a second roll). Enter
    // in a field then submits nothing by itself (a form with a disabled default button has no implicit
    // submission), so a roll typed meanwhile is kept and sent once the first lands.
    // Esc leaves the dice box's fields (the page's keys work again), as it leaves the chat's.
    let again = false;
    rollForm.addEventListener("keydown", (e) => {
      if (!e.target.matches("input")) return;
      if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); e.target.blur(); }
      if (e.key === "Enter" && rollForm.querySelector("button[type=submit]").disabled) { e.preventDefault(); again = true; }
    });
    rollForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      const err = document.getElementById("roll-error");
      err.textContent = "";
      const sent = { notation: rollForm.notation.value, label: rollForm.label.value, visibility: rollForm.visibility.value };
      const action = { type: "roll", notation: sent.notation.trim() };
      if (sent.label.trim()) action.label = sent.label.trim();
      if (sent.visibility !== "public") action.visibility = sent.visibility;
      if (rollForm.character.value) action.character = Number(rollForm.character.value);
      const button = rollForm.querySelector("button[type=submit]");
      button.disabled = true;
      let rolled = false;
      try {
        await sendCommand(action, { show: "log" });
        rolled = true;
      } catch (problem) {
        err.textContent = problem.message;
      } finally {
        button.disabled = false;
        rollForm.notation.focus({ preventScroll: true });
        // Rolled: the old notation selected, so typing the next roll replaces it and Enter repeats it
        // (a keyboard player's "1d4" once went on the end of "3d6 keyboard"). Refused: kept to be fixed.
        // The label was this roll's ("gm secret" once went on to the next): it goes, and so does a
        // hidden "Who sees the dice": the next roll is everyone's unless hidden again on purpose (a
        // public roll made hidden by a choice left over is a roll the table never sees). "For" stays.
        // A field changed while the roll was in flight belongs to the next roll: left as typed.
        if (rolled) {
          if (rollForm.notation.value === sent.notation) rollForm.notation.select();
          if (rollForm.label.value === sent.label) rollForm.label.value = "";
          if (rollForm.visibility.value === sent.visibility) rollForm.visibility.value = "public";
        }
      }
      // The roll typed while this one was in flight goes now; after a refusal it waits, so the
      // refusal stays readable and the player decides.
      if (again) {
        again = false;
        if (rolled) rollForm.requestSubmit();
      }
    });
  }

  // A player with one character rolls for it unless she says otherwise ("no character" once cost
  // a roll its name); the GM's dice box stays on "NPC / no character", most of what she rolls.
  function renderFor(mine) {
    const rollFor = document.getElementById("roll-character");
    if (!rollFor) return;
    const current = !isGM && !rollForChosen && mine.length === 1 ? String(mine[0].id) : rollFor.value;
    const first = rollFor.options[0];
    fill(rollFor, first, ...mine.map((c) => h("option", { value: c.id, selected: String(c.id) === current }, c.name)));
  }
  return { renderFor };
}
