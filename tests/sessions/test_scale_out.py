"""Two server processes sharing Redis: a roll made through one reaches a socket on the other, and commands
racing through both keep one gap-free order. Both servers roll the dice the test scripts (``TEST_DICE_FILE``,
campaign/dice.py), and a die beyond the script is refused."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest
import websockets

from campaign.models import ApiToken
from tests.servers import daphne

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]
# How long a frame or an answer may take before the test gives up: a bound on a hang, never what is
# checked (two daphnes, Redis and PostgreSQL share a loaded 2-core machine with the test).
HANG = 60


def post_roll(base, token, client_id, notation="2d6"):
    request = urllib.request.Request(
        f"http://{base}/api/campaigns/torn-road/commands",
        data=json.dumps({"id": client_id, "action": {"type": "roll", "notation": notation}}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=HANG) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        raise AssertionError(f"{client_id}: {error.code} {error.read()[:500]!r}") from None


def scripted(tmp_path, faces: list[int]) -> dict[str, str]:
    """The servers' environment: these faces, then no die at all (``campaign.dice.QueuedDice``)."""
    path = tmp_path / "faces.json"
    path.write_text(json.dumps({"faces": faces}))
    return {"TEST_DICE_FILE": str(path)}


def script_left(env: dict[str, str]) -> dict:
    """What is left of the script: faces never rolled, and the dice refused once it was used up."""
    with open(env["TEST_DICE_FILE"]) as f:
        return json.load(f)


def faces_of(payload: dict) -> list[int]:
    return [die["face"] for term in payload["terms"] for die in term.get("dice", ())]


def test_roll_through_one_process_reaches_a_socket_on_another(transactional_table, require_redis, tmp_path):
    table = transactional_table
    alice = ApiToken.objects.create(user=table.alice).key
    bob = ApiToken.objects.create(user=table.bob).key
    # Heartbeats off: only the Redis broadcast can deliver the event before the test ends.
    env = {"TABLE_HEARTBEAT_SECONDS": "3600", **scripted(tmp_path, [6, 2])}
    with daphne(redis_url=require_redis, **env) as a, daphne(redis_url=require_redis, **env) as b:

        async def scenario():
            async with websockets.connect(f"ws://{b}/ws/campaigns/torn-road/table/?after=0",
                                          additional_headers={"Authorization": f"Bearer {bob}"}) as ws:
                while json.loads(await asyncio.wait_for(ws.recv(), HANG))["type"] != "ready":
                    pass
                status, event = await asyncio.to_thread(post_roll, a, alice, "via-a")
                assert status == 201
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), HANG))
                    if frame["type"] == "event":
                        return event, frame["event"]

        posted, received = asyncio.run(scenario())
    assert faces_of(posted["payload"]) == [6, 2] and posted["payload"]["total"] == 8  # the scripted dice
    assert received["seq"] == posted["seq"]
    assert received["payload"] == posted["payload"]
    assert script_left(env) == {"faces": []}  # each rolled once, nothing refused


WRITERS = 6  # three per process
ROLLS_EACH = 5


def test_concurrent_commands_from_two_processes_keep_one_order_without_gaps(transactional_table, require_redis,
                                                                            tmp_path):
    """Commands race from two processes, over HTTP and sockets, on one campaign; database work runs on
    several threads per process (sessions/db.py). The stream row's lock still gives one order: every
    command gets its own seq, the seqs have no gap, the chain links, and a socket on each process gets
    every event once and in order."""
    from campaign.models import Event

    table = transactional_table
    keys = {u.username: ApiToken.objects.create(user=u).key for u in (table.gm, table.alice, table.bob)}
    total = WRITERS * ROLLS_EACH + 2 * ROLLS_EACH
    # Every roll is a 1d6, rolled under the campaign's stream lock: the dice go out in log order.
    faces = [n % 6 + 1 for n in range(total)]
    # A command waits for the stream lock, and for a pooled connection, as long as the test waits for its
    # answer: on a loaded machine eight racing writers can queue past the servers' 5 s and 3 s, and a
    # table_busy or database_unavailable answer is not what is checked here (tests/faults check them).
    env = {"TABLE_HEARTBEAT_SECONDS": "3600", "DB_LOCK_TIMEOUT": str(HANG), "DB_POOL_TIMEOUT": str(HANG),
           **scripted(tmp_path, faces)}
    start = Event.objects.filter(campaign=table.campaign).count()
    with daphne(redis_url=require_redis, **env) as a, daphne(redis_url=require_redis, **env) as b:

        def writer(n):
            base, token = (a, b)[n % 2], keys[("alice", "bob")[n % 2]]
            out = [post_roll(base, token, f"w{n}-{i}", "1d6") for i in range(ROLLS_EACH)]
            return out

        async def socket_writer(base, name):
            async with websockets.connect(f"ws://{base}/ws/campaigns/torn-road/table/?after={start}",
                                          additional_headers={"Authorization": f"Bearer {keys[name]}"}) as ws:
                for i in range(ROLLS_EACH):
                    await ws.send(json.dumps({"type": "command", "id": f"{name}-{i}",
                                              "action": {"type": "roll", "notation": "1d6"}}))
                seen, acked = [], []  # the backlog, then live events: one stream
                while len(seen) < total or len(acked) < ROLLS_EACH:
                    try:
                        frame = json.loads(await asyncio.wait_for(ws.recv(), HANG))
                    except TimeoutError:
                        raise AssertionError(f"{name} saw {seen}, acked {acked}") from None
                    if frame["type"] == "event":
                        seen.append(frame["event"]["seq"])
                    elif frame["type"] == "ack":
                        acked.append(frame["seq"])
                    else:
                        assert frame["type"] in ("ready", "presence", "heartbeat"), frame
                return seen, acked

        async def scenario():
            sockets = [asyncio.create_task(socket_writer(a, "gm")), asyncio.create_task(socket_writer(b, "alice"))]
            posted = await asyncio.gather(*[asyncio.to_thread(writer, n) for n in range(WRITERS)])
            return posted, await asyncio.gather(*sockets)

        posted, sockets = asyncio.run(scenario())
    expected = list(range(start + 1, start + total + 1))
    http_seqs = [event["seq"] for answers in posted for status, event in answers if status == 201]
    ws_seqs = [seq for _, acked in sockets for seq in acked]
    assert sorted(http_seqs + ws_seqs) == expected  # each command one seq, none twice, no gap
    for seen, _ in sockets:
        assert seen == expected  # every event once, in order, on both processes
    rows = list(Event.objects.filter(campaign=table.campaign).order_by("seq").values_list("seq", "prev_hash", "hash"))
    assert [seq for seq, _, _ in rows] == list(range(1, start + total + 1))
    assert all(row[1] == before[2] for before, row in zip(rows, rows[1:]))
    rolled = Event.objects.filter(campaign=table.campaign, seq__gt=start).order_by("seq").values_list("payload", flat=True)
    assert [faces_of(payload) for payload in rolled] == [[face] for face in faces]  # each die once, in log order
    assert script_left(env) == {"faces": []}


def test_a_receipt_one_process_signs_is_the_one_another_gives_and_its_key_verifies(transactional_table,
                                                                                  require_redis):
    """Several hosts, one signing key (docs/operations.md, "Several hosts"): the receipt of a head is
    the same whichever process is asked, and every process publishes the key that signed it."""
    import base64

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from campaign.canonical import jcs

    alice = ApiToken.objects.create(user=transactional_table.alice).key

    def call(base: str, path: str, post: bool = False) -> dict:
        request = urllib.request.Request(f"http://{base}{path}", data=b"{}" if post else None,
                                         headers={"Authorization": f"Bearer {alice}",
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=HANG) as response:
            return json.loads(response.read())

    with daphne(redis_url=require_redis) as a, daphne(redis_url=require_redis) as b:
        signed = call(a, "/api/campaigns/torn-road/checkpoints", post=True)
        again = call(b, "/api/campaigns/torn-road/checkpoints", post=True)
        keys = [call(base, "/api/key")["public_key"] for base in (a, b)]
    assert again == signed
    assert keys[0] == keys[1]
    message = jcs({k: signed[k] for k in ("campaign", "seq", "hash", "created_at")})
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(keys[1]))
    public.verify(base64.b64decode(signed["signature"]), message)  # raises if another key signed it
