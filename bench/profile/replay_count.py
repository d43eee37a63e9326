"""Instructions Redis executes a vote: a MONITOR capture's vote.lua calls replayed into a
fresh redis-server under callgrind, once per version of the script, in the unit of a
ZINCRBY counted the same way (on a sorted set of 10 members, as `make bench` times it).
Counted instructions do not drift with the host's speed (timed figures on a shared VM
do, by more than most changes): replays of one capture repeat to about half a percent.

usage: python3 replay_count.py CAPTURE SERVED_SHA VARIANT_DIR [VARIANT_DIR ...]

  CAPTURE      `redis-cli MONITOR` output taken while the server took votes
  SERVED_SHA   the SHA-1 of the vote script the server ran (its calls are the ones kept)
  VARIANT_DIR  a folder holding `vote.lua` as Redis gets it (all its parts in one file),
               named in the output by the folder's name

Each variant gets a fresh redis-server (from PATH) under `valgrind --tool=callgrind`,
counting only while the calls are replayed, and the same calls, their script's SHA-1
replaced by the variant's. After each replay every key's value is digested
(`DEBUG DIGEST-VALUE`): the output says whether each variant left Redis as the first
did, so a faster script that stores something else shows.

With REPLAY_KEEP=DIR in the environment, each variant's count of its calls is kept as
DIR/<variant>.callgrind, for `callgrind_annotate --inclusive=yes` to tell where the
instructions go.
"""
import glob
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from monitor_call import arguments

UNIT_COMMANDS = 20_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def encode(args):
    """One command in RESP; an argument that is not bytes is sent as its text."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def vote_calls(capture, served_sha):
    """The client's EVALSHA calls of the vote script, in order, without their SHA."""
    calls = []
    with open(capture, errors="replace") as f:
        for line in f:
            # Commands a script runs are logged as `[0 lua]`: they are the script's own.
            if '"EVALSHA"' not in line.upper() or " lua]" in line:
                continue
            args = arguments(line)
            if args[1].decode() == served_sha:
                calls.append(args[2:])
    return calls


class CountedRedis:
    """A redis-server under callgrind that counts only between `start` and `stop`."""

    def __init__(self, folder):
        self.folder = folder
        self.port = free_port()
        self.out = os.path.join(folder, "callgrind.out")
        self.process = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no",
             f"--callgrind-out-file={self.out}", "redis-server", "--port", str(self.port),
             "--save", "", "--appendonly", "no", "--dir", folder,
             "--enable-debug-command", "local"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            if self.cli("PING") == "PONG":
                return
            time.sleep(0.1)
        sys.exit("redis-server under valgrind did not start")

    def cli(self, *args, data=None):
        out = subprocess.run(["redis-cli", "-p", str(self.port), *args], input=data,
                             capture_output=True)
        return out.stdout.decode(errors="replace").strip()

    def pipe(self, data):
        """Sends `data`; answers how many of its commands Redis answered with an error."""
        out = subprocess.run(["redis-cli", "-p", str(self.port), "--pipe"], input=data,
                             capture_output=True)
        return int(out.stdout.decode().rsplit("errors: ", 1)[1].split(",")[0])

    def control(self, *args):
        subprocess.run(["callgrind_control", *args, str(self.process.pid)],
                       capture_output=True, check=True)

    def counted(self, data, keep=None):
        """Instructions Redis executed while it took `data` (RESP commands), and how many
        of them it refused; the count is copied to the file `keep` when given."""
        before = set(glob.glob(self.out + "*"))
        self.control("-z")
        self.control("-i", "on")
        errors = self.pipe(data)
        self.control("-i", "off")
        self.control("-d")
        for _ in range(100):
            dumps = set(glob.glob(self.out + "*")) - before
            if dumps:
                break
            time.sleep(0.1)
        (dump,) = dumps
        time.sleep(0.5)
        if keep:
            shutil.copyfile(dump, keep)
        with open(dump) as f:
            for line in f:
                # What the part counted (its `summary:` is what preceded the zeroing).
                if line.startswith("totals:"):
                    return int(line.split()[1]), errors
        sys.exit(f"no total in {dump}")

    def digests(self):
        """Every key's value digested: a key -> digest map."""
        keys = [k for k in self.cli("--scan").split("\n") if k]
        digests = {k: self.cli("DEBUG", "DIGEST-VALUE", k) for k in keys}
        for k, d in digests.items():
            if not (len(d) == 40 and all(c in "0123456789abcdef" for c in d)):
                sys.exit(f"no digest of {k}: {d}")
        return digests

    def close(self):
        self.cli("SHUTDOWN", "NOSAVE")
        self.process.wait()


def replay(folder, calls):
    """Replays `calls` with the script in `folder`: instructions a call's worth, a
    ZINCRBY's, how many calls Redis refused, and the state it left."""
    source = open(os.path.join(folder, "vote.lua"), "rb").read()
    sha = hashlib.sha1(source).hexdigest().encode()
    with tempfile.TemporaryDirectory() as work:
        redis = CountedRedis(work)
        try:
            loaded = redis.cli("-x", "SCRIPT", "LOAD", data=source)
            assert loaded == sha.decode(), loaded
            ping, _ = redis.counted(encode([b"PING"]) * UNIT_COMMANDS)
            zincrby, _ = redis.counted(b"".join(
                encode([b"ZINCRBY", b"unit", b"1", b"m%d" % (i % 10)])
                for i in range(UNIT_COMMANDS)))
            redis.cli("DEL", "unit")
            keep = os.environ.get("REPLAY_KEEP")
            total, errors = redis.counted(
                b"".join(encode([b"EVALSHA", sha, *c]) for c in calls),
                keep and os.path.join(keep, os.path.basename(folder.rstrip("/")) + ".callgrind"))
            return total, (zincrby - ping) / UNIT_COMMANDS, errors, redis.digests()
        finally:
            redis.close()


def compared(digests, first):
    """How `digests` stand against the first variant's."""
    if first is None:
        return f"{len(digests)} keys"
    differ = [k for k in digests.keys() & first.keys() if digests[k] != first[k]]
    alone = sorted(digests.keys() ^ first.keys())
    if not differ and not alone:
        return "the same as the first"
    said = f"**{len(differ)} keys differ from the first**" if differ else "the same values"
    if alone:
        # A counter whose TTL ran out during one replay and not the other, as a rule
        # may when the replay outlasts its window: named so a reader can tell.
        said += f"; only in one of the two: {', '.join(alone[:3])}" + (
            f" and {len(alone) - 3} more" if len(alone) > 3 else "")
    return said


def main():
    capture, served_sha, variants = sys.argv[1], sys.argv[2], sys.argv[3:]
    calls = vote_calls(capture, served_sha)
    if not calls:
        sys.exit(f"no call of script {served_sha} in {capture}")
    # ARGV[2] of vote.lua is the number of votes in the call.
    votes = sum(int(c[int(c[0]) + 2]) for c in calls)
    print(f"{len(calls)} calls of vote.lua, {votes} votes ({votes / len(calls):.1f} a call)")
    print()
    print("| script | instructions a vote | ZINCRBY-times | Redis's state |")
    print("|---|---:|---:|---|")
    first = None
    for folder in variants:
        name = os.path.basename(folder.rstrip("/"))
        total, unit, errors, digests = replay(folder, calls)
        if errors:
            print(f"| {name} | — | — | refused {errors} of the {len(calls)} calls: it takes "
                  "another argument layout (count a capture of each build instead) |")
            continue
        state = compared(digests, first)
        first = first or digests
        per_vote = total / votes
        print(f"| {name} | {per_vote / 1000:.1f}k "
              f"| {per_vote / unit:.1f} (a ZINCRBY {unit:,.0f}) | {state} |")


if __name__ == "__main__":
    main()
