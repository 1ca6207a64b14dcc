import asyncio, signal, time
import pytest
from campaign.models import ApiToken
from .helpers import Daphne, RedisServer, TableClient, describe, post_command, wait_until
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]

def test_frozen(transactional_table, tmp_path):
    table = transactional_table
    key = {n: ApiToken.objects.create(user=getattr(table, n)).key for n in ("gm", "alice", "bob")}
    r = RedisServer(tmp_path); r.start()
    a = Daphne(tmp_path, r.url, TABLE_HEARTBEAT_SECONDS="1"); a.start()
    try:
        async def sc():
            c = TableClient("gm", key["gm"], a.base); c.start()
            await wait_until(lambda: c.readies, 10, "ready")
            r.proc.send_signal(signal.SIGSTOP)
            t = time.monotonic()
            st, body = await asyncio.to_thread(post_command, a.base, key["alice"], "f1")
            print("post1", st, time.monotonic() - t)
            await asyncio.sleep(3)
            print("after 3s", describe(c))
            t = time.monotonic()
            st, body = await asyncio.to_thread(post_command, a.base, key["alice"], "f2")
            print("post2", st, time.monotonic() - t)
            await asyncio.sleep(3)
            print("after 6s", describe(c))
            c2 = TableClient("bob", key["bob"], a.base); c2.start()
            await asyncio.sleep(3)
            print("new client", describe(c2))
            r.proc.send_signal(signal.SIGCONT)
            await asyncio.sleep(3)
            print("after cont", describe(c), describe(c2))
            await c.stop(); await c2.stop()
        asyncio.run(sc())
    finally:
        r.proc.send_signal(signal.SIGCONT)
        a.close(); r.close()
        print(a.log_text()[-3000:])
