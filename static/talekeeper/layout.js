// The table page's one screen: the log, the dice box and the chat fit the window together
// (talekeeper.css .log-panel). The panel's height is the window's less what stands above the
// panel, which changes as the waiting list, the alarm or the header grow and shrink: --log-top
// follows it.

export function fitLog(panel) {
  if (!panel) return;
  const root = document.documentElement;
  const measure = () => {
    const top = panel.getBoundingClientRect().top + window.scrollY;
    root.style.setProperty("--log-top", `${Math.round(top)}px`);
  };
  measure();
  window.addEventListener("resize", measure);
  const watch = new ResizeObserver(measure);
  for (const el of document.querySelectorAll(".bar, .table-head, #waiting, #chain-alarm")) watch.observe(el);
}

// Focus a field at the bottom of the log's panel without scrolling the log away: the panel is
// already on the screen on a desktop; elsewhere only as much as brings the field into view.
export function focusInPanel(field) {
  if (!field) return;
  field.focus({ preventScroll: true });
  const box = field.getBoundingClientRect();
  if (box.top < 0 || box.bottom > window.innerHeight) field.scrollIntoView({ block: "nearest" });
}

// A player without a character lands on her own "new character" form (the page's data says so):
// on a phone it is far below the sheets, which are other players' characters, not hers.
export function landOn(section, field) {
  if (!section) return;
  if ("open" in section) section.open = true;
  section.scrollIntoView({ block: "nearest" });
  field?.focus({ preventScroll: true });
}
