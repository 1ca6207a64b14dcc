// A click is a press and then a release on the same element at the same place. Anything that
// replaces the pressed button between the two (its follow-up box rebuilt because a sheet arrived) or
// moves it (the waiting list above the log growing, the log scrolling to a new line) loses the click.
// So while a follow-up or waiting-list button is held down, those updates wait, and run just after
// the release and its click. No page needed (tests/js/press.test.mjs).

export class Press {
  // `later(fn)`: runs fn after the click the release causes (the page: setTimeout).
  constructor(later = (fn) => setTimeout(fn)) {
    this.later = later;
    this.pressed = null; // the box under the press (a .ev-follow box or the waiting list), or null
    this.held = new Map(); // what waits for the release: a key -> its update (the latest one wins)
  }

  down(box) {
    this.pressed = box;
  }

  // Is `box` (or, with none named, anything) held down now?
  holds(box) {
    return box === undefined ? this.pressed !== null : this.pressed !== null && this.pressed === box;
  }

  hold(key, update) {
    this.held.set(key, update);
  }

  // Run `update` now, or just after the release when something is held down.
  whenFree(key, update) {
    if (this.pressed) this.hold(key, update); else update();
  }

  release() {
    this.pressed = null;
    if (!this.held.size) return;
    this.later(() => {
      if (this.pressed) return; // held down again meanwhile: that release runs them
      const updates = [...this.held.values()];
      this.held.clear();
      for (const update of updates) update();
    });
  }
}

export const press = new Press();

// The page's presses: only the main button's (a right-click's release may never come: the
// context menu takes it), on a follow-up box or the waiting list.
export function listenForPresses(doc) {
  doc.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    press.down(e.target.closest?.(".ev-follow, #waiting-list") || null);
  }, true);
  doc.addEventListener("pointerup", () => press.release(), true);
  doc.addEventListener("pointercancel", () => press.release(), true);
}
