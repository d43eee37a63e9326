"""One EVALSHA call of a MONITOR capture as a Lua file defining KEYS_IN and ARGV_IN.

usage: python3 monitor_call.py MONITOR_FILE > call.lua

Takes the call with the most keys (in a capture of the TV-final shape, a vote.lua call of
group commit's largest size). MONITOR quotes each argument as Redis's sdscatrepr does.
"""
import sys

ESCAPES = {"n": b"\n", "r": b"\r", "t": b"\t", "a": b"\a", "b": b"\b", '"': b'"', "\\": b"\\"}


def arguments(line):
    out, i = [], line.index('"')
    while i < len(line):
        if line[i] != '"':
            i += 1
            continue
        i += 1
        text = bytearray()
        while line[i] != '"':
            if line[i] == "\\":
                kind = line[i + 1]
                if kind == "x":
                    text.append(int(line[i + 2 : i + 4], 16))
                    i += 4
                else:
                    text += ESCAPES[kind]
                    i += 2
            else:
                text += line[i].encode()
                i += 1
        out.append(bytes(text))
        i += 1
    return out


def lua_string(data):
    # Decimal escapes of three digits: a shorter one would take the next digit with it.
    return '"' + "".join(
        chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else "\\%03d" % b for b in data
    ) + '"'


def main():
    calls = [arguments(l) for l in open(sys.argv[1], errors="replace") if '"EVALSHA"' in l.upper()]
    if not calls:
        sys.exit("no EVALSHA call in the capture")
    call = max(calls, key=lambda a: int(a[2]))
    keys = call[3 : 3 + int(call[2])]
    argv = call[3 + int(call[2]) :]
    print("KEYS_IN = {" + ",".join(map(lua_string, keys)) + "}")
    print("ARGV_IN = {" + ",".join(map(lua_string, argv)) + "}")


if __name__ == "__main__":
    main()
