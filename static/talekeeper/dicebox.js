// The dice box: any notation, a label, for which character, who sees it (docs/table.md, "dice box").
// Its "For" list follows the characters the member may act for (renderFor).
import { h, fill } from "./ui.js";

export function setUpDiceBox({ isGM, sendCommand }) {
  const rollForm = document.getElementById("roll-form");
  let rollForChosen = false; // the player picked "For" herself: her choice stands (renderFor)
  if (rollForm) {
    rollForm.character.addEventListener("change", () => { rollForChosen = true; });
    // Esc leaves the dice box's fields (the page's keys work again), as it leaves the chat's.
    rollForm.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && e.target.matches("input")) { e.preventDefault(); e.stopPropagation(); e.target.blur(); }
    });
    rollForm.addEventListener("submit", async (e) => {
      e.preventDefault();
      const err = document.getElementById("roll-error");
      err.textContent = "";
      const action = { type: "roll", notation: rollForm.notation.value.trim() };
      if (rollForm.label.value.trim()) action.label = rollForm.label.value.trim();
      if (rollForm.visibility.value !== "public") action.visibility = rollForm.visibility.value;
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
        if (rolled) {
          rollForm.notation.select();
          rollForm.label.value = "";
          rollForm.visibility.value = "public";
        }
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
