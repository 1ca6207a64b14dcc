// What the table waits for this member to do: the events whose follow-ups offer them a primary
// button of their own ("Roll now" on a request, the GM's "Approve", "Next round"). The list at the
// top of the page, the title's count and the alerts (alerts.js) are drawn from it. No page needed
// (tests/js/waiting.test.mjs).

export class WaitingList {
  // pageHead: the newest event the page was loaded with; those up to it were there before this
  // member opened the page, so they are listed but never announced.
  constructor(pageHead) {
    this.pageHead = pageHead;
    this.seqs = new Set();
    this.alerted = new Set(); // seqs already announced (sound, notification)
  }

  // Mark an event as waiting or not; true when that changed something.
  set(seq, waits) {
    if (waits === this.seqs.has(seq)) return false;
    if (waits) this.seqs.add(seq); else this.seqs.delete(seq);
    return true;
  }

  // The waiting events, oldest first, of those the page holds (`events`: seq -> event).
  list(events) {
    return [...this.seqs].sort((a, b) => a - b).map((seq) => events.get(seq)).filter(Boolean);
  }

  // The one event of `list` to announce now: the newest that came after the page opened and was
  // not announced before (null if none). Every listed event counts as announced from then on.
  toAnnounce(list) {
    const fresh = list.filter((ev) => ev.seq > this.pageHead && !this.alerted.has(ev.seq));
    for (const ev of list) this.alerted.add(ev.seq);
    return fresh.length ? fresh[fresh.length - 1] : null;
  }
}

// The page's title with the count of what waits: "(2) The Torn Road · Talekeeper".
export const titleWith = (count, title) => (count ? `(${count}) ${title}` : title);
