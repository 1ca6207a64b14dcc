"""Benchmark data in the bench database, made through Talekeeper's own write path.

* :func:`make_tables`: N campaigns with a GM and players, each with an API
  token (users get unusable passwords: no PBKDF2 per user);
* :func:`ensure_log`: a WYRM campaign whose log holds at least ``n`` events,
  built fast by calling ``campaign.eventlog.append`` with thousands of drafts per
  transaction (the drafts come from the rules' own ``decide``, fed the state
  folded so far, so every event is one the server could have stored). Scene
  starts and ends go through ``do_command``. Such a log is reused by later
  runs (it is only read), and resumed if a run stopped half-way.

Django must be set up (``common.setup_django``) before this is imported.
"""

from __future__ import annotations

import random
import time

from django.contrib.auth import get_user_model
from django.db import connection, transaction

from bench.signing import Signer, new_key
from campaign.actions import do_add_member, do_command, do_create_campaign
from campaign.eventlog import Draft, append, lock_campaign
from campaign.fairdice import current_commitment
from campaign.models import ApiToken, Campaign, Character, Membership
from rules import get_system
from rules.base import SecretDice

User = get_user_model()

LOG_SLUG = "bench-log-{n}"
CHUNK = 2000  # events per append() transaction when building a log
SCENE_EVERY = 1000  # a scene ends and a new one starts every this many events (campaign-wide events)
CHARACTERS = ["Mira", "Oskar", "Tove", "Ilse"]


def _user(username: str):
    user = User(username=username)
    user.set_unusable_password()
    user.save()
    return user


# Each bench member's private key (hex) by (slug, username), in a signed campaign: what :func:`send` signs with.
KEYS: dict[tuple[str, str], str] = {}


def make_tables(prefix: str, tables: int, clients: int, system: str = "tote", signed: bool = False) -> list[dict]:
    """``tables`` campaigns of ``clients`` members each: member 0 is the GM, the rest players.
    ``signed``: a campaign whose members sign (as every new one), each member's key registered by
    a command signed by itself; the member's dict carries it (``key``), the table's its ``campaign`` id."""
    made = []
    for t in range(tables):
        people = [_user(f"{prefix}-t{t}-c{c}") for c in range(clients)]
        campaign = do_create_campaign(people[0], f"Bench table {t}", system, slug=f"{prefix}-t{t}", signed=signed)
        for person in people[1:]:
            do_add_member(campaign, person, "player", actor=people[0])
        members = [{"username": p.username, "token": ApiToken.objects.create(user=p).key,
                    "role": "gm" if i == 0 else "player"} for i, p in enumerate(people)]
        if signed:
            for member, person in zip(members, people):
                member["key"] = KEYS[campaign.slug, person.username] = new_key()
                send(membership(campaign, person), Signer(member["key"], campaign.id).registration("bench-key"))
        campaign.refresh_from_db()
        made.append({"slug": campaign.slug, "campaign": campaign.id, "signed": signed, "head": campaign.last_seq,
                     "members": members})
    return made


def send(member: Membership, envelope: dict):
    """``do_command`` as ``member``, signed by her bench key for the session running now where she has one."""
    key = KEYS.get((member.campaign.slug, member.user.username))
    if key is not None and "signature" not in envelope:
        campaign = Campaign.objects.get(pk=member.campaign_id)
        envelope = Signer(key, campaign.id, campaign.current_session,
                          current_commitment(campaign)).envelope(envelope["id"], envelope["action"])
    return do_command(member, envelope)


def signer(table: dict, member: dict) -> Signer | None:
    """What a bot of ``table`` signs its commands with, for the session the table recorded (None: unsigned)."""
    if not table.get("signed"):
        return None
    return Signer(member["key"], table["campaign"], table.get("session"), table.get("commitment"))


# Each system's own repeatable actions for a character (the load plays characters' rule actions, not
# only 2d6), the ones an evening is mostly made of; a plain roll sits beside them as players also use one.
RULE_ACTIONS = {
    "tote": [{"type": "skill_test", "skill": "Strike", "target": 12},
             {"type": "effect_test", "dice": 2, "label": "damage"}],
    "wyrm": [{"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 12},
             {"type": "damage", "dice": 2, "bonus": 1}],
    "tale": [{"type": "straight_roll", "target": 21}],
    "mdt": [{"type": "test", "attribute": "presence", "difficulty": 2},
            {"type": "opposed_test", "attribute": "wits", "vs_pool": 3}],
}
SYSTEMS = list(RULE_ACTIONS)


def make_rule_tables(prefix: str, tables: int, clients: int, signed: bool = False) -> list[dict]:
    """Like :func:`make_tables`, the systems in turn, each player with a character of the
    system's example sheet and a session running (its number and dice commitment in the table's
    dict: what the bots sign under); every player gets the actions they roll: their system's rule
    actions for their character and a plain ``2d6``."""
    made = []
    for t in range(tables):
        system = SYSTEMS[t % len(SYSTEMS)]
        (table,) = make_tables(f"{prefix}-{t}{system}", 1, clients, system=system, signed=signed)
        campaign = Campaign.objects.get(slug=table["slug"])
        members = {m.user.username: m for m in
                   Membership.objects.select_related("user", "campaign").filter(campaign=campaign)}
        gm = next(m for m in members.values() if m.role == "gm")
        send(gm, {"id": "bench-session", "action": {"type": "start_session"}})
        sheet = get_system(system).example_sheet
        for i, member in enumerate(table["members"]):
            if member["role"] != "player":
                continue
            result = send(members[member["username"]], {"id": f"bench-hero-{i}", "action": {
                "type": "create_character", "name": f"Hero {i}", "sheet": sheet}})
            character = result.events[0].character.id
            member["character"] = character
            member["actions"] = [{**a, "character": character} for a in RULE_ACTIONS[system]] + [
                {"type": "roll", "notation": "2d6"}]
        campaign.refresh_from_db()
        table.update(system=system, head=campaign.last_seq, session=campaign.current_session,
                     commitment=current_commitment(campaign))
        made.append(table)
    return made


def add_backlog(slugs: list[str], per_table: int, tag: str) -> dict[str, int]:
    """``per_table`` rule actions by the players of each table (as if rolled while some sockets
    were away); returns each table's head afterwards."""
    heads = {}
    for slug in slugs:
        campaign = Campaign.objects.get(slug=slug)
        players = list(Membership.objects.select_related("user", "campaign")
                       .filter(campaign=campaign, role="player").order_by("id"))
        characters = {c.owner_id: c.id for c in Character.objects.filter(campaign=campaign)}
        for k in range(per_table):
            member = players[k % len(players)]
            action = {**RULE_ACTIONS[campaign.system][k % len(RULE_ACTIONS[campaign.system])],
                      "character": characters[member.user_id]}
            send(member, {"id": f"{tag}-{k}", "action": action})
        heads[slug] = Campaign.objects.get(pk=campaign.pk).last_seq
    return heads


def ensure_secret_roll(campaign: Campaign) -> tuple[object, int]:
    """A player at the log's table and one secret roll by the GM for the first character.

    The player may not see that roll, so their view of the character's sheet must
    be folded without it (``campaign.visibility.visible_state``). Idempotent:
    fixed command ids, so a second run finds the same player and roll.
    """
    slug = campaign.slug
    player = User.objects.filter(username=f"{slug}-player").first() or _user(f"{slug}-player")
    do_add_member(campaign, player, "player")
    gm = membership(campaign, Membership.objects.get(campaign=campaign, role="gm").user)
    character = Character.objects.filter(campaign=campaign).order_by("id").first()
    do_command(gm, {"id": "secret-roll-1", "action": {"type": "roll", "notation": "2d6", "character": character.id,
                                                      "visibility": "secret"}})
    return player, character.id


def membership(campaign: Campaign, user) -> Membership:
    return Membership.objects.select_related("user", "campaign").get(campaign=campaign, user=user)


def _log_campaign(n: int) -> tuple[Campaign, object]:
    slug = LOG_SLUG.format(n=n)
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None:
        gm = User.objects.filter(username=f"{slug}-gm").first() or _user(f"{slug}-gm")
        campaign = do_create_campaign(gm, f"Bench log of {n} events", "wyrm", slug=slug, signed=False)
    gm = Membership.objects.get(campaign=campaign, role="gm").user
    return campaign, gm


def ensure_log(n: int, seed: int = 7, progress=None) -> dict:
    """A WYRM campaign with at least ``n`` events; returns its slug, GM and how it was made."""
    campaign, gm = _log_campaign(n)
    gm_member = membership(campaign, gm)
    rules = get_system("wyrm")
    t0 = time.perf_counter()
    reused = campaign.last_seq >= n
    if not reused:
        rng = random.Random(seed + campaign.last_seq)
        dice = SecretDice()
        characters = list(Character.objects.filter(campaign=campaign).order_by("id"))
        for name in CHARACTERS[len(characters):]:
            result = do_command(gm_member, {"id": f"create-{name}", "action": {
                "type": "create_character", "name": name, "sheet": rules.example_sheet}})
            characters.append(result.events[0].character)
        from campaign.projections import replay

        states, _ = replay(campaign)  # the state each character is in now (resuming a partial build)
        skills = {c.id: [s["name"] for s in states[c.id]["skills"]] for c in characters}
        while True:
            campaign.refresh_from_db()
            left = n - campaign.last_seq
            if left <= 0:
                break
            stamp = f"{campaign.last_seq}"
            if campaign.current_scene is not None:
                do_command(gm_member, {"id": f"end-scene-{stamp}", "action": {"type": "end_scene"}})
                left -= 1
            if campaign.current_session is None:
                do_command(gm_member, {"id": f"start-session-{stamp}", "action": {"type": "start_session"}})
                left -= 1
            if left > 1:
                do_command(gm_member, {"id": f"start-scene-{stamp}", "action": {"type": "start_scene"}})
                left -= 1
            drafts = []
            for _ in range(max(0, min(left, CHUNK, SCENE_EVERY - 3))):
                character = rng.choice(characters)
                state = states[character.id]
                roll = rng.random()
                if roll < 0.05 and state["fate"] < 90:
                    action = {"type": "grant_fate", "character": character.id, "amount": 1, "reason": "heroics"}
                elif roll < 0.10:
                    action = {"type": "award_points", "character": character.id, "points": 1}
                else:
                    action = {"type": "check", "character": character.id,
                              "attribute": rng.choice(["warrior", "rogue", "mage"]),
                              "skills": rng.sample(skills[character.id], k=rng.randint(0, 1)),
                              "dl": rng.randint(4, 10)}
                for event in rules.decide(state, action, dice):
                    state = rules.evolve(state, event)
                    drafts.append(Draft(event.type, event.payload, event.version, character))
                states[character.id] = state
            if drafts:
                with transaction.atomic():
                    locked = lock_campaign(campaign.id)
                    append(locked, drafts, actor=gm)
            if progress and (campaign.last_seq // 20_000) != ((campaign.last_seq + len(drafts)) // 20_000):
                progress(f"building the log of {n} events: {campaign.last_seq + len(drafts)} so far")
        campaign.refresh_from_db()
        # The machine's PostgreSQL runs without autovacuum (bench.common.analyze): a log built
        # after the run's ANALYZE has no statistics, and the sheets "as of" read right after it
        # waited 40 ms per call on the planner's guesses (run beb4c7c, docs/performance.md).
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE campaign_event, campaign_charactersnapshot, campaign_command")
    return {"slug": campaign.slug, "campaign_id": campaign.id, "events": campaign.last_seq, "gm": gm.username,
            "reused": reused, "build_s": round(time.perf_counter() - t0, 2)}
