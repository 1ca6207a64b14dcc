"""Signed checkpoints: the server's key, receipts members keep, and `verify_log --receipt`.

Each rewrite of #9 below recomputes every hash (tests/campaign/host.py), so the
chain alone says OK; a receipt a player kept names the seq.
"""

from __future__ import annotations

import base64
import io
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from campaign.canonical import jcs
from campaign.models import Checkpoint
from tests.campaign import host
from tests.campaign.served import client_for


def url(table) -> str:
    return f"/api/campaigns/{table.campaign.slug}/checkpoints"


def ask_for_receipt(table, user) -> dict:
    res = client_for(user).post(url(table))
    assert res.status_code == 201, res.content
    return res.json()


def write(tmp_path, data, name="receipt.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def verify_log(table, *receipts) -> str:
    args = [a for path in receipts for a in ("--receipt", path)]
    out = io.StringIO()
    call_command("verify_log", table.campaign.slug, *args, stdout=out)
    return out.getvalue()


def refused(table, *receipts) -> str:
    with pytest.raises(CommandError) as caught:
        verify_log(table, *receipts)
    return str(caught.value)


def an_evening(table):
    table.command(table.gm, {"type": "start_session"})
    for n in range(4):
        table.command(table.alice, {"type": "roll", "notation": "2d6"})
    table.command(table.bob, {"type": "roll", "notation": "1d20"})


def test_the_key_is_public_and_a_members_receipt_is_signed_by_it(table):
    res = Client().get("/api/key")
    assert res.status_code == 200 and res.json()["algorithm"] == "ed25519"
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(res.json()["public_key"]))
    an_evening(table)
    receipt = ask_for_receipt(table, table.bob)
    table.campaign.refresh_from_db()
    assert set(receipt) == {"campaign", "seq", "hash", "created_at", "signature"}
    assert (receipt["campaign"], receipt["seq"], receipt["hash"]) == ("torn-road", table.campaign.last_seq,
                                                                      table.campaign.head_hash)
    message = jcs({k: receipt[k] for k in ("campaign", "seq", "hash", "created_at")})
    public.verify(base64.b64decode(receipt["signature"]), message)  # raises if not the server's


def test_every_session_end_signs_a_checkpoint_and_members_list_them(table):
    an_evening(table)
    table.command(table.gm, {"type": "end_session"})
    table.campaign.refresh_from_db()
    stored = Checkpoint.objects.get(campaign=table.campaign)
    assert (stored.seq, stored.hash) == (table.campaign.last_seq, table.campaign.head_hash)
    listed = client_for(table.watcher).get(url(table)).json()["checkpoints"]
    assert [c["seq"] for c in listed] == [stored.seq] and listed[0]["signature"] == stored.signature
    assert client_for(table.outsider).get(url(table)).status_code == 404
    assert Client().post(url(table)).status_code == 401


def stored_heads(table, seqs) -> None:
    """Checkpoints at ``seqs`` straight into the table (the list reads rows; signing is tested above)."""
    Checkpoint.objects.bulk_create(Checkpoint(campaign=table.campaign, seq=seq, hash=f"{seq:064x}",
                                              created_at=f"2026-01-01T00:00:00.{seq:06d}+00:00",
                                              signature="s") for seq in seqs)


def read_pages(client, base: str, cursor: str, first: int) -> tuple[list[int], int]:
    seqs, value, pages = [], first, 0
    while True:
        page = client.get(f"{base}&{cursor.removeprefix('next_')}={value}").json()
        pages += 1
        seqs += [c["seq"] for c in page["checkpoints"]]
        assert page["has_more"] == (len(page["checkpoints"]) == 500)  # 1,203 heads: the last page is short
        if not page["has_more"]:
            return seqs, pages
        value = page[cursor]


def test_a_long_list_comes_in_pages_with_no_gap_and_no_repeat(table):
    """1,203 heads (and, from before one checkpoint per head, repeats at some): in seq order a page
    at a time, and newest first, each checkpoint once, the first signed at its head."""
    heads = list(range(3, 3 * 1203 + 1, 3))
    stored_heads(table, heads)
    stored_heads(table, heads[::100])  # the same heads signed again
    client = client_for(table.watcher)
    seqs, pages = read_pages(client, url(table) + "?limit=500", "next_after", 0)
    assert (seqs, pages) == (heads, 3)
    seqs, pages = read_pages(client, url(table) + "?order=newest&limit=500", "next_before", 10**17)
    assert (seqs, pages) == (heads[::-1], 3)
    first = client.get(url(table) + f"?after={heads[99]}&limit=1").json()["checkpoints"][0]
    assert first["seq"] == heads[100] and first["created_at"].endswith(f".{heads[100]:06d}+00:00")
    latest = client.get(url(table) + "?order=newest&limit=10").json()
    assert [c["seq"] for c in latest["checkpoints"]] == heads[::-1][:10] and latest["has_more"]
    assert latest["next_before"] == heads[-10]
    unasked = client.get(url(table)).json()  # no page asked for: one page, never the whole list
    assert [c["seq"] for c in unasked["checkpoints"]] == heads[:100] and unasked["has_more"]


@pytest.mark.parametrize("query", ["limit=0", "limit=501", "after=-1", "after=x", "order=oldest",
                                   "order=newest&after=3", "before=9", "order=newest&before=0"])
def test_a_bad_page_of_checkpoints_is_a_clear_400(table, query):
    res = client_for(table.alice).get(url(table) + "?" + query)
    assert res.status_code == 400 and res.json()["error"]["code"] == "invalid", res.content


def test_a_receipt_of_the_same_log_verifies(table, tmp_path):
    an_evening(table)
    first = ask_for_receipt(table, table.alice)
    table.command(table.alice, {"type": "roll", "notation": "2d6"})
    second = ask_for_receipt(table, table.alice)
    assert verify_log(table, write(tmp_path, [first, second])).startswith("OK")


def test_a_truncated_log_with_its_head_fixed_is_caught_by_a_receipt(table, tmp_path):
    an_evening(table)
    receipt = write(tmp_path, ask_for_receipt(table, table.alice))
    host.truncate(table.campaign, table.campaign.last_seq - 2)
    assert verify_log(table).startswith("OK")  # the chain alone is fooled
    assert f"BAD seq {json.loads(open(receipt).read())['seq']}: the log ends before" in refused(table, receipt)


def test_a_rewritten_outcome_with_rehashing_is_caught_by_a_receipt(table, tmp_path):
    an_evening(table)
    receipt = ask_for_receipt(table, table.alice)
    roll = table.campaign.events.filter(type="roll").order_by("seq").first()
    host.edit_payload(table.campaign, roll.seq, {**roll.payload, "total": roll.payload["total"] + 100})
    assert verify_log(table).startswith("OK")
    assert f"BAD seq {receipt['seq']}" in refused(table, write(tmp_path, receipt))


def test_a_deleted_and_renumbered_event_is_caught_by_a_receipt(table, tmp_path):
    an_evening(table)
    receipt = ask_for_receipt(table, table.alice)
    table.command(table.alice, {"type": "roll", "notation": "2d6"})  # the log went on after the receipt
    host.delete_and_renumber(table.campaign, receipt["seq"] - 2)
    assert verify_log(table).startswith("OK")
    assert f"BAD seq {receipt['seq']}" in refused(table, write(tmp_path, receipt))


def test_two_swapped_events_are_caught_by_a_receipt(table, tmp_path):
    an_evening(table)
    receipt = ask_for_receipt(table, table.alice)
    host.swap(table.campaign, receipt["seq"] - 3, receipt["seq"] - 1)
    assert verify_log(table).startswith("OK")
    assert f"BAD seq {receipt['seq']}" in refused(table, write(tmp_path, receipt))


def test_a_receipt_the_server_did_not_sign_is_refused(table, tmp_path):
    an_evening(table)
    receipt = ask_for_receipt(table, table.alice)
    forged = {**receipt, "created_at": "2020-01-01T00:00:00.000000+00:00"}
    assert f"BAD seq {receipt['seq']}: the receipt's signature" in refused(table, write(tmp_path, forged))


def test_a_receipt_file_that_is_not_json_is_a_clear_error(table, tmp_path):
    path = tmp_path / "r.json"
    path.write_text("{not json")
    assert "is not JSON" in refused(table, str(path))
    assert "a receipt must be a checkpoint" in refused(table, write(tmp_path, {"seq": 1}))



def test_one_checkpoint_per_head_and_none_made_by_spectators(table):
    first = ask_for_receipt(table, table.alice)
    again = client_for(table.bob).post(url(table))
    assert again.status_code == 200 and again.json() == first  # the same head: the same receipt, no new row
    refused = client_for(table.watcher).post(url(table))
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert Checkpoint.objects.filter(campaign=table.campaign).count() == 1
    table.command(table.gm, {"type": "start_session"})
    assert ask_for_receipt(table, table.alice)["seq"] == first["seq"] + 1
