"""Shared by the hardening suite: hostile values, the log's invariants, characters to act for.

Every test here says the same thing in a different way: whatever a client sends,
the answer is a clear refusal (4xx / an error frame with a code and a message)
or a stored command, never a 500 or a dead socket, and a refusal leaves the log
exactly as it was (same length, same head, a chain that still verifies).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings as hypothesis_settings, strategies as st

from rules import SYSTEM_MODULES, get_system

ROOT = Path(__file__).resolve().parents[2]
SYSTEMS = sorted(SYSTEM_MODULES)
TABLE_ACTIONS = ("roll", "add_seed", "create_character", "start_session", "end_session", "start_scene",
                 "end_scene", "void", "reveal", "request_roll", "add_member", "remove_member", "change_role",
                 "rename_campaign", "witness_commit", "witness_roll", "configure_campaign", "require_signed_commands")

# --- how long to fuzz ------------------------------------------------------------------------


def fuzz_settings(examples: int):
    """``examples`` scaled by the active Hypothesis profile (its max_examples over Hypothesis's 100).

    The default keeps each suite within about 30 seconds in CI; a deeper run is
    ``HYPOTHESIS_PROFILE=deep pytest tests/hardening`` (tests/conftest.py)."""
    scale = hypothesis_settings.default.max_examples / 100
    return hypothesis_settings(max_examples=max(1, round(examples * scale)), deadline=None,
                               suppress_health_check=list(HealthCheck))



# --- the log's invariants -------------------------------------------------------------


def log_snapshot(campaign) -> tuple[int, int, str]:
    """(stored events, the stream's last_seq, the stream's head hash), read fresh."""
    from campaign.models import Campaign, Event

    row = Campaign.objects.values_list("last_seq", "head_hash").get(pk=campaign.pk)
    return Event.objects.filter(campaign_id=campaign.pk).count(), row[0], row[1]


def assert_chain_ok(campaign) -> None:
    from campaign.eventlog import verify_chain
    from campaign.models import Campaign

    report = verify_chain(Campaign.objects.get(pk=campaign.pk))
    assert report.ok, f"the chain broke at seq {report.bad_seq}: {report.reason}"


def assert_clear_error(status: int, body) -> None:
    """A 4xx with ``{"error": {"code", "message"}}``: a code a program can switch on, words a person can read."""
    assert 400 <= status < 500, f"expected a 4xx refusal, got {status}: {body!r:.300}"
    assert isinstance(body, dict) and set(body) == {"error"}, body
    error = body["error"]
    assert isinstance(error.get("code"), str) and re.fullmatch(r"[a-z_]{2,40}", error["code"]), error
    assert isinstance(error.get("message"), str) and len(error["message"].strip()) >= 5, error


def assert_error_frame(frame: dict) -> None:
    assert frame["type"] == "error", frame
    assert "id" in frame and (frame["id"] is None or isinstance(frame["id"], str)), frame
    assert isinstance(frame.get("code"), str) and re.fullmatch(r"[a-z_]{2,40}", frame["code"]), frame
    assert isinstance(frame.get("message"), str) and len(frame["message"].strip()) >= 5, frame


# --- hostile values -------------------------------------------------------------------

HUGE = 10**4000  # the biggest kind json.dumps still prints (Python refuses int <-> str past 4300 digits)
HUGE_LITERAL = "1" + "0" * 5000  # 10**5000 only exists as text on the wire

NOTABLE_INTS = [0, 1, -1, 2, 6, 7, 10, 12, 20, 100, 1000, 10**6, -10**6, 2**31, -2**31, 2**53 + 1, 2**63 - 1,
                2**63, -2**63 - 1, 2**64, 10**18, 10**100, -10**100, HUGE, -HUGE]
NOTABLE_TEXT = ["", " ", "\t\n", "0", "-1", "1e9", "null", "true", "[]", "{}", "NaN", "Infinity", "\u00b2", "\u0663",
                "\u202e", "\ufeff", "\u0000", "a\u0000b", "\U0001f4a5" * 20, "x" * 5000, "9" * 400, "Strike", "rogue",
                "presence", "brawn", "skill", "attribute", "reroll", "auto", "<script>alert(1)</script>",
                "'; DROP TABLE campaign_event; --", "../../etc/passwd", "%s%s%n", "\\u0000"]
ints = st.one_of(st.sampled_from(NOTABLE_INTS), st.integers(min_value=-(10**20), max_value=10**20))
floats = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from([0.5, -0.0, 1e308, 5e-324, 6.0, 2.5])
texts = st.one_of(st.sampled_from(NOTABLE_TEXT), st.text(max_size=40))
scalars = st.one_of(st.none(), st.booleans(), ints, floats, texts)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(texts, inner, max_size=6)),
    max_leaves=12,
)


@lru_cache(maxsize=None)
def field_names(system: str) -> tuple[str, ...]:
    """Every action field the system's code reads (harvested from its source, so new fields are fuzzed too)."""
    names = set()
    # The system's own code, and the actions every system shares (conditions) or the table's new ones read.
    for source in [*(ROOT / "rules" / system).glob("*.py"), ROOT / "rules" / "conditions.py",
                   ROOT / "campaign" / "actions" / "witnesses.py"]:
        names |= set(re.findall(r'(?:action|spread)(?:\.get\(|, )"([a-z_]+)"', source.read_text()))
    names |= {"character", "visibility", "type", "settings", "name", "duration", "rounds", "modifier"}
    return tuple(sorted(names))


@lru_cache(maxsize=None)
def plausible_words(system: str) -> tuple[str, ...]:
    """Short string literals of the system's code (skill, attribute and option names...): values the rules accept."""
    words = set()
    # The system's own code, and the actions every system shares (conditions) or the table's new ones read.
    for source in [*(ROOT / "rules" / system).glob("*.py"), ROOT / "rules" / "conditions.py",
                   ROOT / "campaign" / "actions" / "witnesses.py"]:
        words |= set(re.findall(r'"([A-Za-z][A-Za-z_ ]{1,24})"', source.read_text()))
    return tuple(sorted(words))


def field_values(system: str) -> st.SearchStrategy:
    """Half plausible (small numbers, the system's own words), half hostile."""
    plausible = st.one_of(st.integers(-3, 30), st.booleans(), st.sampled_from(plausible_words(system)),
                          st.lists(st.sampled_from(plausible_words(system)), max_size=3))
    return st.one_of(plausible, json_values)


def action_types(system: str) -> list[str]:
    return sorted({*TABLE_ACTIONS, *get_system(system).actions})


def valid_actions(system: str) -> list[dict]:
    """Actions the rules accept in the right state: the contract suite's evening for the system, and the table's."""
    from tests.contract.evenings import EVENINGS

    return [dict(action) for _, action in EVENINGS[system]] + [
        {"type": "roll", "notation": "2d6+1"}, {"type": "add_seed", "seed": "lucky"},
        {"type": "create_character", "name": "Extra"}, {"type": "void", "seq": 3, "reason": "oops"},
        {"type": "reveal", "seq": 3}, {"type": "request_roll", "action": {"type": "roll", "notation": "1d6"}},
        {"type": "add_member", "username": "outsider", "role": "spectator"},
        {"type": "witness_roll", "roll": 3, "entropy": "A" * 43},
        {"type": "witness_commit", "roll": 3, "commitment": "a" * 64},
        {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}},
        {"type": "apply_condition", "name": "Blinded", "duration": "rounds", "rounds": 2, "modifier": 0},
        {"type": "remove_condition", "name": "Blinded"},
    ]


def hostile_actions(system: str, character_ids: st.SearchStrategy) -> st.SearchStrategy:
    """A real action of ``system`` (or of the table), valid or near it, with random values in its real fields."""
    fields = field_names(system)
    base = st.one_of(st.sampled_from(valid_actions(system)), st.sampled_from(action_types(system)).map(lambda t: {"type": t}))

    def build(action, character, changes, dropped, visibility):
        action = {k: v for k, v in action.items() if k not in dropped}
        action.update(changes)
        if character is not ...:
            action["character"] = character
        if visibility is not ...:
            action["visibility"] = visibility
        return action

    return st.builds(
        build,
        base,
        st.one_of(character_ids, character_ids, st.just(...), json_values),
        st.dictionaries(st.sampled_from(fields), field_values(system), max_size=3),
        st.sets(st.sampled_from(fields), max_size=2),
        st.one_of(st.just(...), st.just(...), st.sampled_from(["public", "gm", "secret"]), json_values),
    )


# --- a table with characters ------------------------------------------------------------


class Cast:
    """A table of ``system`` with a character each for alice (hero) and bob (rival), a session and a scene running."""

    def __init__(self, table):
        self.table = table
        system = get_system(table.campaign.system)
        self.hero = table.create_character(table.alice, "Hero", dict(system.example_sheet))
        self.rival = table.create_character(table.bob, "Rival", dict(system.example_sheet))
        table.command(table.gm, {"type": "start_session"})
        table.command(table.gm, {"type": "start_scene"})
        table.campaign.refresh_from_db()

    @property
    def campaign(self):
        return self.table.campaign


# --- signed contributions to witnessed rolls ------------------------------------------------


class Witnessing:
    """A signed table whose GM's rolls wait for witnesses (docs/fair-dice.md, "Witnessed rolls"): one
    alice and bob ``decided``, alice's signed reveal to it (``replay``: its envelope as sent), and rolls
    still waiting for alice, bob and the spectator (who never reveals here, so none completes): one open
    for commitments, and for each reveal a fresh one whose commitments are closed, alice's and bob's to
    the entropy the plan reveals. :meth:`envelope` builds a signed ``witness_commit`` or ``witness_roll``
    command from a :data:`witness_plans` plan."""

    def __init__(self, table, monkeypatch, settings):
        from campaign.actions import witnesses as witnessing

        self.table = table
        # No roll falls due while the fuzzer runs: nothing is swept.
        settings.WITNESS_COMMIT_SECONDS = settings.WITNESS_REVEAL_SECONDS = 10**6
        online: set[str] = set()
        monkeypatch.setattr(witnessing, "_presence", lambda campaign_id: set(online))
        table.command(table.gm, {"type": "configure_campaign", "settings": {"witnessed_rolls": "gm"}})
        self.cast = Cast(table)
        online.update({"gm", "alice", "bob"})
        self.used = {"alice": "w-alice", "bob": "w-bob", "gm": "w-gm"}  # an id each member used before
        self.decided = table.command(table.gm, {"type": "roll", "notation": "1d6"}, client_id="w-gm").events[0].seq
        self.replay = self.signed("alice", "w-alice", {"type": "witness_roll", "roll": self.decided,
                                                       "entropy": good_entropy("alice-replay")})
        for who, tag in (("alice", "alice-replay"), ("bob", "bob")):
            self.commit(who, self.decided, good_entropy(tag))
        table.command(table.alice, self.replay["action"], client_id=self.replay["id"])
        table.command(table.bob, {"type": "witness_roll", "roll": self.decided, "entropy": good_entropy("bob")},
                      client_id="w-bob")
        online.add("watcher")
        self.open = self.gm_roll()
        self.waiting = self.open
        table.campaign.refresh_from_db()
        self.session = table.campaign.current_session
        self.commitment = self.commitment_now()
        self.count = 0

    def gm_roll(self) -> int:
        """A GM-only roll of the GM's, waiting for alice, bob and the spectator: its pending seq (its call's is next)."""
        return self.table.command(self.table.gm, {"type": "roll", "notation": "1d6", "visibility": "gm"}).events[0].seq

    def commit(self, who: str, roll: int, entropy) -> None:
        from rules.witness import commitment

        member = getattr(self.table, who).pk
        text = commitment(roll, member, entropy if isinstance(entropy, str) else good_entropy("any"))
        self.table.command(getattr(self.table, who), {"type": "witness_commit", "roll": roll, "commitment": text})

    def committed(self, who: str) -> bool:
        from campaign.models import Event

        return Event.objects.filter(campaign=self.table.campaign, type="roll_committed", payload__roll=self.open,
                                    actor__username=who).exists()

    def closed_roll(self, who: str, entropy) -> int:
        """A fresh roll whose commitments are closed, ``who``'s to ``entropy`` (as far as it is text)."""
        roll = self.gm_roll()
        for member in ("alice", "bob", "watcher"):
            self.commit(member, roll, entropy if member == who else good_entropy(f"{member}-{roll}"))
        return roll

    def commitment_now(self) -> str:
        from campaign.fairdice import current_commitment

        return current_commitment(self.table.campaign)

    def signed(self, name: str, command_id: str, action: dict) -> dict:
        from tests.signing import signed

        return signed(self.table.campaign, name, {"id": command_id, "action": action})

    def envelope(self, plan: dict) -> dict:
        """The envelope ``plan["who"]`` sends: a commitment or a reveal with hostile fields, signatures and ids."""
        from rules.witness import commitment
        from tests.signing import signature

        who, self.count = plan["who"], self.count + 1
        if plan["replay"] == "exact":
            return dict(self.replay)
        entropy = good_entropy(f"{who}-{self.count}") if plan["entropy"] == "good" else plan["entropy"]
        if plan["roll"] == "waiting":
            if plan["kind"] == "reveal":
                self.waiting = self.closed_roll(who, entropy)
            else:
                if self.committed(who):  # a roll she has not committed to yet: each plan's commitment may be her first
                    self.open = self.gm_roll()
                self.waiting = self.open
        self.table.campaign.refresh_from_db()
        roll = {"waiting": self.waiting, "decided": self.decided, "call": self.waiting + 1,
                "head": self.table.campaign.last_seq + 1}.get(plan["roll"], plan["roll"]) \
            if isinstance(plan["roll"], str) else plan["roll"]
        if plan["kind"] == "reveal":
            action = {"type": "witness_roll", "roll": roll, "entropy": entropy}
        else:  # a good commitment is to the entropy of the plan; a hostile one is the plan's value itself
            text = commitment(roll if type(roll) is int else 0, getattr(self.table, who).pk, entropy) \
                if plan["entropy"] == "good" else entropy
            action = {"type": "witness_commit", "roll": roll, "commitment": text}
        command_id = f"w{self.count}"
        if plan["replay"] == "same_id":  # an id she used before, another action
            command_id = self.used[who]
        elif plan["replay"] == "new_id":  # alice's contribution again, under a new id
            action = dict(self.replay["action"])
        envelope = {"id": command_id, "action": action}
        campaign_id, signer = self.table.campaign.id, plan["signer"]
        if signer == "unsigned":
            return envelope
        if signer == "garbage":
            return {**envelope, "signature": plan["garbage"]}
        name = {"other_key": "bob" if who != "bob" else "alice"}.get(signer, who)
        session, commitment = {"other_session": (self.session + 1, "0" * 64),
                               "no_session": (None, None)}.get(signer, (self.session, self.commitment))
        try:
            sig = signature(name, campaign_id, command_id, action, session, commitment)
        except (OverflowError, ValueError, TypeError):  # no JCS holds it: signed as some other action
            sig = signature(name, campaign_id, command_id, {"type": action["type"]}, session, commitment)
        if signer == "tampered":
            sig["sig"] = plan["garbage"] if isinstance(plan["garbage"], str) else sig["sig"][:-4] + "AAAA"
        return {**envelope, "signature": sig}


def good_entropy(tag: str) -> str:
    import base64
    import hashlib

    return base64.urlsafe_b64encode(hashlib.sha256(tag.encode()).digest()).rstrip(b"=").decode()


BAD_ENTROPY = ["", "A" * 42, "A" * 44, "A" * 42 + "=", "A" * 43 + "=", "/" * 43, "+" * 43, "A" * 42 + "\u00e9",
               "A" * 42 + "\u0000", " " + "A" * 42, "A" * 4000]
_HOSTILE_PLAN = {
    # The spectator is the waiting roll's witness who never contributes; the GM, its sender, is no witness.
    "who": st.sampled_from(["alice", "bob", "gm"]),
    "roll": st.one_of(st.sampled_from(["waiting", "decided", "call", "head"]), ints, json_values),
    "entropy": st.one_of(st.just("good"), st.sampled_from(BAD_ENTROPY), st.integers(0, 90).map(lambda n: "A" * n),
                         json_values),
    "signer": st.sampled_from(["own", "other_key", "other_session", "no_session", "unsigned", "tampered", "garbage"]),
    "garbage": json_values,
    "replay": st.sampled_from(["no", "exact", "same_id", "new_id"]),
    "kind": st.sampled_from(["commit", "reveal"]),
}
_GOOD_PLAN = {"who": st.sampled_from(["alice", "bob"]), "roll": st.just("waiting"), "entropy": st.just("good"),
              "signer": st.just("own"), "garbage": json_values, "replay": st.just("no"),
              "kind": st.sampled_from(["commit", "reveal"])}
# A listed witness's good commitment or reveal with one field made hostile, or with several.
witness_plans = st.one_of(
    *(st.fixed_dictionaries({**_GOOD_PLAN, key: _HOSTILE_PLAN[key]}) for key in ("who", "roll", "entropy", "signer",
                                                                                 "replay")),
    st.fixed_dictionaries(_HOSTILE_PLAN),
)


@pytest.fixture
def high_rate_limits(settings):
    """Fuzzing sends hundreds of commands a minute: rate limits are tested elsewhere."""
    settings.RATE_LIMIT_USER_PER_MINUTE = 10**9
    settings.RATE_LIMIT_PREVIEWS_PER_MINUTE = 10**9
    settings.RATE_LIMIT_SOCKET_PER_10S = 10**9
    settings.SOCKETS_PER_USER = 10**9  # some fuzzers keep every socket they opened
    return settings


def token_for(user) -> str:
    from campaign.models import ApiToken

    return ApiToken.objects.create(user=user).key


# --- known application bugs -----------------------------------------------------------------
# Inputs that crash the application, while such a bug is open. Each is pinned by a strict-xfail
# test (which starts failing the day it is fixed); the fuzzers step around it meanwhile so that
# they keep looking for new ones. Delete its line here when the bug is fixed.


def hits_known_bug(body, endpoint: str) -> str | None:
    """The known bug a parsed request body would hit at ``endpoint`` ("commands", "preview" or "socket").

    None today: every bug this suite found is fixed and pinned by a ``test_fixed_bug_*``. When a
    fuzzer finds a new one, describe its input here so the fuzzers step around it while it is
    open, and pin it with a strict-xfail test.
    """
    return None


def raw_hits_known_bug(raw: bytes | str, endpoint: str) -> str | None:
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError, TypeError):
        return None
    return hits_known_bug(body, endpoint)
