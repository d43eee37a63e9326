import hashlib
import hmac
import time


def verify_ovation(secret, signature, delivery, body, now=None, tolerance_s=300):
    """Whether an Ovation webhook delivery is genuine and fresh: `signature` is its
    X-Ovation-Signature header (`t=<unix>,v1=<hex>[,v1=<hex>]`), `delivery` its
    X-Ovation-Delivery header, `body` the raw request body as text."""
    parts = [p.split("=", 1) for p in signature.split(",") if "=" in p]
    stamps = [v for k, v in parts if k == "t"]
    if not stamps or not stamps[0].isdigit():
        return False
    t = int(stamps[0])
    if abs((time.time() if now is None else now) - t) > tolerance_s:
        return False
    message = f"{t}.{delivery}.{body}".encode()
    expected = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, v) for k, v in parts if k == "v1")


# Run as a program (as the tests do): the delivery's body on standard input, the rest in
# the environment; exits 0 when it verifies, 1 when not.
if __name__ == "__main__":
    import os
    import sys

    env = os.environ
    now = float(env["NOW"]) if env.get("NOW") else None
    ok = verify_ovation(env["OVATION_SECRET"], env["SIGNATURE"], env["DELIVERY"], sys.stdin.read(), now)
    sys.exit(0 if ok else 1)
