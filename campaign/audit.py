"""What the GM looks at between sessions: the filtered log, sheets as of any
event and their differences, sessions, and every character's advancement.

Everything here is read from the log (or from projections folded from it);
nothing is written. The views are in :mod:`campaign.audit_views`.

* :class:`LogFilter` / :func:`log_page`: the log filtered by session, scene,
  character, event type and actor *in SQL*, one keyset page at a time
  (``seq > after`` or ``seq < before``), so a 100k-event log costs the same as
  a small one. Migration ``0004_event_audit_indexes`` adds the indexes the
  session, scene and actor filters use.
* :func:`sheet_diff`: the difference between two states as key paths with
  old -> new values.
* :func:`advancement`: points earned, spent and available for every
  character, and the history of every change, found by folding the log
  through the rules' ``evolve`` (system-agnostic: whatever changes
  ``state["points"]`` is an entry). Voided events do not count.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Iterator, NamedTuple

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import QuerySet

from rules import Event as RulesEvent
from rules.common import EVENTS as COMMON
from rules.declare import EventBook

from .eventlog import marks_after, serialize_event, timestamp
from .platform_events import PLATFORM_EVENTS
from .models import VISIBILITY_GM, VISIBILITY_SECRET, VISIBILITY_SHARED, VISIBILITY_WORDS, Campaign, Character, Event
from .projections import CAMPAIGN_WIDE, VOID, fold, plain_json, state_as_of, voided_seqs
from .softcache import cache_get, cache_set
from .visibility import READ_BY_NAMED, Viewer, for_viewer

PAGE_SIZE = 50
DICE_SHOWN = 24  # dice listed per event on the page (the payload has them all)
MISSING = object()  # a key path absent on one side of a diff


# --- describing an event in one line -----------------------------------------------------

# Payload keys worth naming in a one-line summary, in the order they are shown.
SUMMARY_KEYS = ("advance", "kind", "skill", "attribute", "characteristic", "name", "project", "label", "use",
                "target", "dl", "difficulty", "vs_pool", "points", "amount", "cost", "xp", "injuries", "total",
                "score", "successes", "outcome")


def _words(text: str) -> str:
    return str(text).replace("_", " ")


def _short(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)[:40]
    return str(value)


def _reason(p: dict) -> str:
    """`` “reason”`` when the payload gives one in words, else nothing."""
    return f" “{p['reason']}”" if isinstance(p.get("reason"), str) and p["reason"] else ""


def _line(text: str) -> str:
    """One line of the log is at most 200 characters."""
    return text if len(text) <= 200 else text[:199] + "…"


# The platform's events' sentences, as declared (campaign/platform_events.py). Said once: the table's
# page reads the same sentences (sessions/views.py passes them as ``lines``) and a system's from its
# declarations, and describe.js fills them with format.js fillTemplate, which fills as
# rules/declare.py fill_description does (tests/test_js.py holds the two to one sentence).
LINES = {spec.type: spec.description for spec in PLATFORM_EVENTS if spec.description}
COMMON_EVENTS = EventBook(COMMON)


def _declared(kind: str, version: int, p: dict, rules) -> tuple[Any, dict]:
    """The declaration an event reads by (the platform's, else its system's, upcast to today's
    version), and its payload as that declaration reads it; ``(None, p)`` if none declares it."""
    if kind in PLATFORM_EVENTS:
        return PLATFORM_EVENTS.spec_of(kind), p
    if rules is None and kind in COMMON_EVENTS:  # every system's (a settings change, an adjustment)
        return COMMON_EVENTS.spec_of(kind), p
    if rules is not None and rules.events and kind in rules.events:
        try:
            kind, _, p = rules.events.upcast_parts(kind, version, p)
        except (ValueError, KeyError, TypeError):  # a version newer than this code, a payload no server wrote
            return None, p  # said plainly below: the audit page, and every member's CSV, stopped at it
        return rules.events.specs[kind], p
    return None, p


def describe(data: dict, rules=None, voided: dict[int, dict] | None = None) -> str:
    """A one-line, human summary of a serialized event (after the visibility filter).

    Every declared event reads as its declaration says (``campaign/platform_events.py`` for the
    platform's, ``rules/<system>/evolve.py`` for a system's, with ``rules`` given): the sentence the
    table says too, then its ``tail`` (the outcome the table shows beside it) and the reason given.
    A void quotes the line of the event it voided when ``voided`` (:func:`voided_events`) holds it
    as its reader may see it."""
    if data.get("hidden"):
        # A sealed stub says who, when and who may read it (visibility.SEALED_KEYS), never what: not
        # even that it rolled (it may be an NPC the GM made). A whisper's visibility says it is one.
        if data.get("visibility") == "whisper":
            return "a whisper (sealed: not for you)"
        return "something done in secret (sealed: not for you)"
    kind, p = data["type"], data.get("payload") or {}
    if kind == "bundle":  # one hidden command's several rule events (docs/hidden-information.md)
        return _line(" · ".join(describe({"type": e.get("type", "?"), "version": e.get("version", 1),
                                          "payload": e.get("payload")}, rules)
                                for e in p.get("events") or [] if isinstance(e, dict)))
    spec, p = _declared(kind, data.get("version", 1), p, rules)
    if spec is not None and spec.description:
        values = {"character_name": data.get("character_name"), **p, **_worked_out(kind, p, rules, voided)}
        said = spec.describe(values) + spec.describe_tail(values)
        named_reason = "{reason" in spec.description + spec.tail
        return _line(said + ("" if named_reason else _reason(p)))
    facts = [f"{_words(key)} {_short(p[key])}" for key in SUMMARY_KEYS if key in p and p[key] not in (None, "", [])]
    if "from" in p and "to" in p:
        facts.append(f"{_short(p['from'])} → {_short(p['to'])}")
    return _line(_words(kind) + (": " + ", ".join(facts) if facts else "") + _reason(p))


def _worked_out(kind: str, p: dict, rules, voided: dict[int, dict] | None) -> dict:
    """The values a platform sentence names that are not in its payload (campaign/platform_events.py),
    as the audit works them out: a void's and a reveal's event in its own line, a request's action."""
    if kind == VOID:
        target = (voided or {}).get(voided_seq(p))
        if target is not None and not target.get("hidden"):
            return {"voided": describe(target, rules)}
        # Its type in words when the voided event is not at hand or is sealed for the reader (the
        # void's payload then says ``sealed``: campaign/visibility/readers.py ``shown_type``).
        return {"voided": f"{_words(p.get('type') or 'unknown')} event"}
    if kind == "roll_revealed":
        body = p.get("body") if isinstance(p.get("body"), dict) else p  # scheme v1 reveals carried "type" directly
        # A roll, or the void of one revealed with it (campaign/actions/log_entries.py decide_reveal): said in
        # the revealed event's own line, as the table says it ("revealed #12: rolled 2d6 = 7").
        inner, payload = body.get("type"), body.get("payload")
        if not isinstance(inner, str) or inner == kind:  # a payload no server wrote: no line to quote
            return {"revealed": None}
        return {"revealed": describe({"type": inner, "version": body.get("version", 1),
                                      "payload": payload if isinstance(payload, dict) else {}}, rules)}
    if kind == "roll_requested":
        wanted = p.get("asked") or p.get("action") or {}  # "asked" in a campaign whose members sign
        return {"wanted": _words(wanted.get("type", "a roll")) if isinstance(wanted, dict) else "a roll"}
    return {}


def voided_seq(p: dict) -> int | None:
    """The seq a void's payload names, when it is one (an imported log's payload may hold anything there)."""
    seq = p.get("seq")
    # Within the log's seq column (a bigint): SQLite refuses to even look one up beyond it.
    return seq if isinstance(seq, int) and not isinstance(seq, bool) and 1 <= seq < 2**63 else None


def voided_events(campaign: Campaign, events: list[dict], viewer: Viewer | None = None) -> dict[int, dict]:
    """The events the voids among ``events`` voided, by seq, as ``viewer`` may see them (``None``: the
    GM's audit, as stored), for :func:`describe` to quote: one query, and one for reveals for a member."""
    seqs = {voided_seq(e["payload"]) for e in events if e.get("type") == VOID and not e.get("hidden")} - {None}
    if not seqs:
        return {}
    rows = Event.objects.filter(campaign=campaign, seq__in=seqs).select_related("actor", "character")
    found = {row.seq: serialize_event(row) for row in rows}
    if viewer is None:
        return found
    _, revealed = marks_after(campaign.id, min(seqs) - 1)  # a mark comes after its target
    return {seq: for_viewer(data, viewer, revealed) for seq, data in found.items()}


def dice_text(payload: dict, limit: int | None = None) -> str:
    """The dice a payload recorded (``dice_log``), as ``d6:4 d6:1`` (the first ``limit`` of them),
    marked when they were rolled outside a session and so can't be checked against a seed."""
    log = payload.get("dice_log") or []
    text = " ".join(f"d{sides}:{face}" for sides, face in log[:limit])
    if limit is not None and len(log) > limit:
        text += f" … {len(log)} dice in all"
    return text + " (not verifiable)" if log and payload.get("verifiable") is False else text


# --- the filtered log ---------------------------------------------------------------------

@dataclass(frozen=True)
class LogFilter:
    """Which events to show; every field narrows the SQL query (None: any)."""

    session: int | None = None
    scene: int | None = None
    character: int | None = None
    type: str | None = None
    actor: int | None = None

    def queryset(self, campaign: Campaign) -> QuerySet:
        """The matching events, unordered. Each filter is a column of an index
        beginning with (campaign, ...) and ending in seq."""
        qs = Event.objects.filter(campaign=campaign)
        if self.session is not None:
            qs = qs.filter(session=self.session)
        if self.scene is not None:
            qs = qs.filter(scene=self.scene)
        if self.character is not None:
            qs = qs.filter(character_id=self.character)
        if self.type:
            # An event type names its former names too (stored rows keep the name they had).
            events = campaign.rules.events
            qs = qs.filter(type__in=events.stored_names(self.type) if events is not None else [self.type])
        if self.actor is not None:
            qs = qs.filter(actor_id=self.actor)
        return qs

    def params(self) -> dict[str, str]:
        """As query-string parameters (only those set)."""
        return {k: str(v) for k, v in self.__dict__.items() if v not in (None, "")}

    @property
    def active(self) -> bool:
        return bool(self.params())


@dataclass
class LogPage:
    events: list[dict]
    total: int  # events matching the filter, in the whole log
    has_previous: bool
    has_next: bool

    @property
    def first_seq(self) -> int | None:
        return self.events[0]["seq"] if self.events else None

    @property
    def last_seq(self) -> int | None:
        return self.events[-1]["seq"] if self.events else None


def log_page(campaign: Campaign, flt: LogFilter, after: int | None = None, before: int | None = None,
             size: int = PAGE_SIZE) -> LogPage:
    """One page of matching events in seq order: the first ``size`` with seq > ``after``,
    or (with ``before``) the last ``size`` with seq < ``before``.

    Each event is serialized as stored (the audit is the GM's: nothing is hidden)
    plus ``voided_by`` (the voiding event's seq, actor and reason) and
    ``revealed_by`` (the seq of the reveal of a hidden roll).
    """
    qs = flt.queryset(campaign).select_related("actor", "character")
    if before is not None:
        rows = list(qs.filter(seq__lt=before).order_by("-seq")[: size + 1])
        more_before = len(rows) > size
        rows = rows[:size][::-1]
        has_previous, has_next = more_before, bool(rows) and qs.filter(seq__gt=rows[-1].seq).exists()
    else:
        rows = list(qs.filter(seq__gt=after or 0).order_by("seq")[: size + 1])
        more_after = len(rows) > size
        rows = rows[:size]
        has_next, has_previous = more_after, bool(rows) and qs.filter(seq__lt=rows[0].seq).exists()
    events = [serialize_event(row) for row in rows]
    if events:
        marks = marks_on(campaign, events[0]["seq"], events[-1]["seq"])
        voided = voided_events(campaign, events)
        for data in events:
            data.update(marks.get(data["seq"], {}))
            data["summary"] = describe(data, campaign.rules, voided)
            data["visibility_words"] = visibility_words(data)
            data["dice"] = dice_text(data["payload"], limit=DICE_SHOWN)
    return LogPage(events, flt.queryset(campaign).count(), has_previous, has_next)


def named_readers(data: dict) -> list[str]:
    """The usernames a ``gm`` (or legacy ``shared``) event names as its readers besides the GM
    (campaign/visibility/readers.py); none for any other event, nor for its sealed stub (its payload is hidden)."""
    named = (data.get("payload") or {}).get("shared_with") if data.get("visibility") in READ_BY_NAMED else None
    return [str(r.get("username")) for r in named if isinstance(r, dict)] if isinstance(named, list) else []


def visibility_words(data: dict) -> dict:
    """An event's badge words: a ``gm`` event that names other readers (campaign/visibility/readers.py) says whom,
    as the table's badge does (static/talekeeper/describe.js)."""
    names = named_readers(data)
    if names == [data.get("actor")] and data.get("visibility") == VISIBILITY_GM:
        return VISIBILITY_WORDS[VISIBILITY_SECRET]  # a player's action on her own secret roll: hers and the GM's
    if names:
        return {**VISIBILITY_WORDS[VISIBILITY_SHARED], "badge": "shared with " + ", ".join(names)}
    return VISIBILITY_WORDS.get(data.get("visibility"), {})


def marks_on(campaign: Campaign, first: int, last: int) -> dict[int, dict]:
    """Voids and reveals naming events ``first..last``: {seq: {"voided_by": ..., "revealed_by": ...}}.

    A mark always comes after its target, so only marks after ``first`` are read
    (through the (campaign, type, seq) index)."""
    marks: dict[int, dict] = {}
    rows = (Event.objects.filter(campaign=campaign, type__in=(VOID, "roll_revealed"), seq__gt=first)
            .values_list("type", "seq", "payload", "actor__username"))
    for kind, seq, payload, actor in rows:
        target = payload.get("seq")
        if not isinstance(target, int) or not first <= target <= last:
            continue
        if kind == VOID:
            marks.setdefault(target, {})["voided_by"] = {"seq": seq, "actor": actor, "reason": payload.get("reason", "")}
            marks[target]["voided"] = True
        else:
            marks.setdefault(target, {})["revealed_by"] = seq
    return marks


def event_types(campaign: Campaign) -> list[str]:
    """The event types in this log, in order.

    A loose index scan: each step seeks the next type in the (campaign, type,
    seq) index, so ten types cost ten seeks however long the log is (a plain
    DISTINCT reads every row). The same SQL runs on SQLite and PostgreSQL."""
    table = Event._meta.db_table
    sql = f"""
        WITH RECURSIVE types(type) AS (
            SELECT MIN(type) FROM {table} WHERE campaign_id = %s
            UNION ALL
            SELECT (SELECT MIN(e.type) FROM {table} e WHERE e.campaign_id = %s AND e.type > types.type)
            FROM types WHERE types.type IS NOT NULL
        )
        SELECT type FROM types WHERE type IS NOT NULL"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [campaign.pk, campaign.pk])
        stored = [row[0] for row in cursor.fetchall()]
    if not stored:
        return []
    # Listed under today's names: a former name filters as its current one (LogFilter).
    events = campaign.rules.events
    return sorted({events.current_name(t) for t in stored}) if events is not None else stored


# --- sessions -----------------------------------------------------------------------------

@dataclass
class SessionInfo:
    number: int
    start_seq: int
    started_at: datetime
    end_seq: int | None = None
    ended_at: datetime | None = None

    @property
    def finished(self) -> bool:
        return self.end_seq is not None


def sessions(campaign: Campaign) -> list[SessionInfo]:
    """Every play session, from its start and end events."""
    found: dict[int, SessionInfo] = {}
    rows = (Event.objects.filter(campaign=campaign, type__in=("session_started", "session_ended"))
            .order_by("seq").values_list("type", "session", "seq", "created_at"))
    for kind, number, seq, at in rows:
        if kind == "session_started":
            found[number] = SessionInfo(number, seq, at)
        elif number in found:
            found[number].end_seq, found[number].ended_at = seq, at
    return [found[n] for n in sorted(found)]


# --- sheets as of an event, and their differences --------------------------------------------

def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A state as ``{key path: value}``: dicts by key (``points.earned``), lists of
    dicts or lists by index (``skills[1].name``); a list of plain values is one value."""
    out: dict[str, Any] = {}
    if isinstance(value, dict):
        if not value and prefix:
            out[prefix] = {}
        for key in sorted(value, key=str):
            out.update(flatten(value[key], f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{i}]"))
    else:
        out[prefix] = value
    return out


class Change(NamedTuple):
    path: str
    old: Any  # MISSING when the path did not exist
    new: Any  # MISSING when the path no longer exists

    @property
    def kind(self) -> str:
        return "added" if self.old is MISSING else "removed" if self.new is MISSING else "changed"

    def old_text(self) -> str:
        return value_text(self.old)

    def new_text(self) -> str:
        return value_text(self.new)


def value_text(value: Any) -> str:
    if value is MISSING:
        return "—"
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def sheet_diff(old: dict | None, new: dict | None) -> list[Change]:
    """Every key path whose value differs between two states, in path order."""
    a, b = flatten(old or {}), flatten(new or {})
    changes = []
    for path in sorted(set(a) | set(b), key=_path_key):
        before, after = a.get(path, MISSING), b.get(path, MISSING)
        if before is MISSING or after is MISSING or before != after or type(before) is not type(after):
            changes.append(Change(path, before, after))
    return changes


def _path_key(path: str):
    # Numeric list indexes sort as numbers: skills[2] before skills[10].
    return [int(part) if part.isdigit() else part for part in re.split(r"\[(\d+)\]", path)]


def states_as_of(character: Character, seqs: Iterable[int]) -> dict[int, dict | None]:
    """``projections.state_as_of`` for several seqs (each starts from a snapshot near it)."""
    return {s: plain_json(state_as_of(character, s)) for s in sorted(set(seqs))}


def sheet_rows(state: dict | None) -> list[tuple[str, str]]:
    """A state as (key path, JSON value) rows for a table."""
    return [(path, value_text(value)) for path, value in sorted(flatten(state or {}).items(),
                                                                key=lambda item: _path_key(item[0]))]


# --- advancement --------------------------------------------------------------------------

@dataclass
class PointsChange:
    """One event at which a character's points changed (or would have, had it not been voided)."""

    seq: int
    type: str
    created_at: datetime
    actor: str | None
    deltas: dict[str, int]  # {"earned": +3} / {"spent": +2}: only what changed
    earned: int  # totals after the event (unchanged by a voided one)
    spent: int
    why: str
    voided: bool = False

    @property
    def available(self) -> int:
        return self.earned - self.spent

    @property
    def event_words(self) -> str:
        """The event's type in words ("advance bought"), as the advancement page's column reads it."""
        return _words(self.type)

    @property
    def delta_text(self) -> str:
        return ", ".join(f"{'+' if d > 0 else '−'}{abs(d)} {key}" for key, d in self.deltas.items())

    @property
    def when(self) -> str:
        return timestamp(self.created_at)


@dataclass
class Advancement:
    character_id: int
    name: str
    owner: str | None
    npc: bool = False  # the GM's own character: its card says "NPC", not the GM's name
    earned: int = 0
    spent: int = 0
    history: list[PointsChange] = field(default_factory=list)

    @property
    def available(self) -> int:
        return self.earned - self.spent


class _Row(NamedTuple):
    # What the fold reads of an event (``projections.fold`` needs only these).
    seq: int
    type: str
    version: int
    payload: dict
    character_id: int | None
    actor_id: int | None
    created_at: datetime


ROW_FIELDS = _Row._fields


def _points(state: dict | None) -> dict[str, int]:
    points = (state or {}).get("points") or {}
    return {k: v for k, v in points.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def _why(row: _Row, rules) -> str:
    p = row.payload or {}
    if isinstance(p.get("reason"), str) and p["reason"]:
        return p["reason"]
    return describe({"type": row.type, "version": row.version, "payload": p}, rules)


@dataclass
class _FoldState:
    """The advancement fold at ``last_seq``: enough to resume it with later events."""

    last_seq: int = 0
    last_hash: str = ""
    states: dict[int, dict] = field(default_factory=dict)
    seqs: dict[int, int] = field(default_factory=dict)
    history: dict[int, list[PointsChange]] = field(default_factory=dict)


def _fold_points(campaign: Campaign, rows: Iterable[_Row], acc: _FoldState, voided: set[int], usernames) -> None:
    """Fold ``rows`` exactly as projections do (``projections.fold``, one event at a
    time) and record each change of ``state["points"]``. A voided event that
    would have changed points is recorded as voided, and not applied."""
    rules = campaign.rules
    states = acc.states
    for row in rows:
        if row.seq in voided:
            state = states.get(row.character_id)
            if state is not None and row.type not in CAMPAIGN_WIDE:
                would = _points(rules.evolve(state, RulesEvent(row.type, row.payload, row.version)))
                deltas = _deltas(_points(state), would)
                if deltas:
                    acc.history.setdefault(row.character_id, []).append(
                        _change(row, deltas, _points(state), usernames, True, rules))
            continue
        if row.type == "character_created":
            concerned = [row.character_id]
        elif row.type in CAMPAIGN_WIDE:
            concerned = list(states)
        else:
            concerned = [row.character_id] if row.character_id in states else []
        if not concerned:
            continue
        before = {cid: _points(states.get(cid)) for cid in concerned}
        fold(campaign, [row], states, acc.seqs, set())
        for cid in concerned:
            after = _points(states.get(cid))
            deltas = _deltas(before[cid], after)
            if deltas:
                acc.history.setdefault(cid, []).append(_change(row, deltas, after, usernames, False, rules))
            else:
                acc.history.setdefault(cid, [])


def _deltas(before: dict, after: dict) -> dict[str, int]:
    out = {}
    for key in sorted(set(before) | set(after), key=lambda k: (k != "earned", k != "spent", k)):
        d = after.get(key, 0) - before.get(key, 0)
        if d:
            out[key] = d
    return out


def _change(row: _Row, deltas: dict, totals: dict, usernames, voided: bool, rules) -> PointsChange:
    return PointsChange(seq=row.seq, type=row.type, created_at=row.created_at, actor=usernames(row.actor_id),
                        deltas=deltas, earned=totals.get("earned", 0), spent=totals.get("spent", 0),
                        why=_why(row, rules), voided=voided)


def _rows(qs: QuerySet) -> Iterator[_Row]:
    for values in qs.order_by("seq").values_list(*ROW_FIELDS).iterator(chunk_size=2000):
        yield _Row(*values)


def _usernames():
    User = get_user_model()
    known: dict[int | None, str | None] = {None: None}

    def lookup(user_id):
        if user_id not in known:
            known[user_id] = User.objects.filter(pk=user_id).values_list("username", flat=True).first()
        return known[user_id]

    return lookup


CACHE_PREFIX = "talekeeper:advancement:"


def _advancement_fold(campaign: Campaign) -> _FoldState:
    """The fold over the whole log, resumed from a per-process cache when possible.

    The log only grows, so a fold at seq N stays right while event N is still the
    one it saw (its hash names the whole prefix) and no void came after N; then
    only the newer events are folded. Otherwise it starts again from seq 1.
    """
    usernames = _usernames()
    key = f"{CACHE_PREFIX}{campaign.pk}"
    acc: _FoldState | None = cache_get(key)
    if acc is not None:
        still = Event.objects.filter(campaign=campaign, seq=acc.last_seq).values_list("hash", flat=True).first()
        new_voids = Event.objects.filter(campaign=campaign, type=VOID, seq__gt=acc.last_seq).exists()
        if still != acc.last_hash or new_voids or acc.last_seq > campaign.last_seq:
            acc = None
    if acc is None:
        acc = _FoldState()
    head = Event.objects.filter(campaign=campaign).order_by("-seq").values_list("seq", "hash").first()
    if head is None:
        return acc
    if head[0] != acc.last_seq:
        voided = voided_seqs(campaign)
        new = Event.objects.filter(campaign=campaign, seq__gt=acc.last_seq, seq__lte=head[0])
        _fold_points(campaign, _rows(new), acc, voided, usernames)
        acc.last_seq, acc.last_hash = head
        cache_set(key, acc, timeout=24 * 3600)
    return acc


def advancement(campaign: Campaign, character_id: int | None = None) -> list[Advancement]:
    """Points earned, spent and available for each character (or one), with the
    history of every change, rebuilt from the log like every projection."""
    acc = _advancement_fold(campaign)
    characters = Character.objects.filter(campaign=campaign).select_related("owner")
    if character_id is not None:
        characters = characters.filter(pk=character_id)
    out = []
    for character in characters:
        totals = _points(acc.states.get(character.id))
        out.append(Advancement(character.id, character.name, character.owner.username if character.owner else None,
                               character.npc, totals.get("earned", 0), totals.get("spent", 0),
                               list(acc.history.get(character.id, []))))
    return out
