"""How long Redis stops answering when a board's idempotency records expire: N records
kept as one hash (a hash per interval, freed at once) against N keys of their own (each
expiring apart, as Ovation keeps them), and what each record takes in memory.

usage: python3 record_expiry.py N [N ...]

Starts its own redis-server (from PATH) on a free port. For each N: fills one hash of N
fields and lets it expire, with `lazyfree-lazy-expire` off (Redis 7's default) and on,
and UNLINKs it; then writes N keys that expire together a few seconds later. Meanwhile
one client sends PINGs one after another and reports the longest wait for an answer.
A record is shaped like a vote's: a caller and key as the field or the key's name, the
fingerprint, receipt and six scores as the value.
"""
import socket
import subprocess
import sys
import tempfile
import time

from replay_count import encode, free_port

VALUE = b"0123456789abcdef0123456789abcdef|r-000000000000|12,12000000,30,30000000,45,45000000"
HASH = b"{b:1}idem:100"


class Redis:
    def __init__(self, port):
        self.port = port

    def cli(self, *args):
        args = [a.decode() if isinstance(a, bytes) else str(a) for a in args]
        out = subprocess.run(["redis-cli", "-p", str(self.port), *args],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()

    def pipe(self, commands):
        """Sends `commands` (an iterator of encoded commands) in chunks of about 4 MB."""
        chunk = bytearray()
        for c in commands:
            chunk += c
            if len(chunk) > 4 << 20:
                self._send(chunk)
                chunk = bytearray()
        if chunk:
            self._send(chunk)

    def _send(self, data):
        subprocess.run(["redis-cli", "-p", str(self.port), "--pipe"], input=bytes(data),
                       capture_output=True, check=True)

    def used_memory(self):
        return int(self.cli("INFO", "memory").split("used_memory:")[1].split()[0])

    def longest_ping(self, seconds, action=None):
        """PINGs one after another for `seconds`, `action()` run after 0.2 s: the longest
        wait for an answer, in ms."""
        s = socket.create_connection(("127.0.0.1", self.port))
        worst, start, acted = 0.0, time.perf_counter(), False
        while time.perf_counter() - start < seconds:
            if action and not acted and time.perf_counter() - start > 0.2:
                action()
                acted = True
            t = time.perf_counter()
            s.sendall(b"PING\r\n")
            got = b""
            while not got.endswith(b"\r\n"):
                got += s.recv(64)
            worst = max(worst, time.perf_counter() - t)
        s.close()
        return worst * 1000


def fill_hash(r, n):
    r.pipe(encode([b"HSET", HASH, b"5:api-1:key-%d" % i, VALUE]) for i in range(n))


def measure(r, n):
    print(f"| {n:,} records | | |")
    r.cli("FLUSHALL")
    print(f"| nothing expiring | {r.longest_ping(1):.1f} ms | |")
    for lazy in ["no", "yes"]:
        r.cli("FLUSHALL")
        r.cli("CONFIG", "SET", "lazyfree-lazy-expire", lazy)
        fill_hash(r, n)
        per_record = int(r.cli("MEMORY", "USAGE", HASH, "SAMPLES", "0")) / n
        wait = r.longest_ping(3, lambda: r.cli("PEXPIRE", HASH, "1"))
        print(f"| one hash expiring, lazyfree-lazy-expire {lazy} | {wait:.1f} ms "
              f"| {per_record:.0f} B |")
    r.cli("CONFIG", "SET", "lazyfree-lazy-expire", "no")
    r.cli("FLUSHALL")
    fill_hash(r, n)
    wait = r.longest_ping(3, lambda: r.cli("UNLINK", HASH))
    print(f"| one hash unlinked | {wait:.1f} ms | |")
    r.cli("FLUSHALL")
    before = r.used_memory()
    # Long enough to write them all first: they expire together, after the fill.
    expires_at = int(time.time() * 1000) + 4000 + n // 100
    r.pipe(encode([b"SET", b"{b:1}idem:5:api-1:key-%d" % i, VALUE, b"PXAT", expires_at])
           for i in range(n))
    per_record = (r.used_memory() - before) / n
    left = max(0.0, expires_at / 1000 - time.time())
    wait = r.longest_ping(left + 6)
    print(f"| keys of their own, expiring together ({r.cli('DBSIZE')} left after) "
          f"| {wait:.1f} ms | {per_record:.0f} B |")


def main():
    port = free_port()
    with tempfile.TemporaryDirectory() as folder:
        server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "",
                                   "--appendonly", "no", "--dir", folder],
                                  stdout=subprocess.DEVNULL)
        try:
            r = Redis(port)
            for _ in range(50):
                try:
                    r.cli("PING")
                    break
                except subprocess.CalledProcessError:
                    time.sleep(0.1)
            print("| | longest wait for a PING | memory a record |")
            print("|---|---:|---:|")
            for n in map(int, sys.argv[1:]):
                measure(r, n)
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
