"""Hidden information, in one place: what a member may see, and what she may not never shapes.

* :mod:`.filter`: the one visibility filter (``for_viewer``, who may see: ``may_see``);
* :mod:`.folds`: a character's state folded as a member may see it (``visible_state``);
* :mod:`.readers`: who reads a hidden decision besides the GM, and how a mark on a hidden event
  is stored;
* :mod:`.hidden`: hidden-shaped characters and the decision taken on them (``decide``,
  ``one_event``).

Each lies above the one before it (``.importlinter``); the names below are the package's public ones
(docs/hidden-information.md).
"""

from .filter import (HIDDEN_ROW, READ_BY_NAMED, SEALED_KEYS, Viewer, as_stored, for_viewer, may_see, shared_with,
                     voided_for, whispered_to)
from .folds import hidden_folded_from, visible_fold, visible_state
from .hidden import EVERYONE, REFUSED, decide, hidden_shaped, live_hidden_changes, one_event
from .readers import (kept_from_the_table, named, naming_readers, readers_of, revealed, shared_ids, sharers,
                      shown_type)

__all__ = [
    "HIDDEN_ROW", "READ_BY_NAMED", "SEALED_KEYS", "Viewer", "as_stored", "for_viewer", "may_see", "shared_with",
    "voided_for", "whispered_to",
    "hidden_folded_from", "visible_fold", "visible_state",
    "EVERYONE", "REFUSED", "decide", "hidden_shaped", "live_hidden_changes", "one_event",
    "kept_from_the_table", "named", "naming_readers", "readers_of", "revealed", "shared_ids", "sharers", "shown_type",
]
