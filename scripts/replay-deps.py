#!/usr/bin/env python3
"""Replays a measured overlapped pipeline timeline under the engine's stage dependencies, old
and new: what the same stage durations give when execution no longer waits for the roots'
thread (in memory), may run VERIFY_QUEUE units ahead of verification, and a GPU launch after
the first does its hashes and checks on the recover thread.

Usage: scripts/replay-deps.py BENCH.json [HOST_US_PER_TX]

For each overlapped in-memory row of the bench JSON (`gigagas bench --pipeline on --json`),
it prints:
- the measured wall (the last write's end in the recorded timeline, the median repeat);
- the replay under the old dependencies: a check of the replay itself;
- the replay under the new ones: a prediction, all else equal.

Each stage keeps its measured duration, so contention that changes with the new overlap is
not seen, nor is a stage's wait for a busy pool. Rows whose roots or writes the model does
not place (a from-scratch root, `bal none`) are listed as skipped. A GPU launch after the first is assumed to take its measured busy time plus
HOST_US_PER_TX (default 1.0) per signature for its hashes and checks on one thread: a
pessimistic bound (the busy time already holds the hashes done in parallel; one thread on
the 2-core VM: 0.61 us a signature to hash, 0.08 to prepare). Rows on disk are skipped (their
state comes from the roots' thread in both).
"""
import json
import sys

VERIFY_QUEUE = 4


def spans(block):
    s = block["stages"]

    def get(k):
        v = s.get(k)
        return (v[0], v[1]) if v and v[1] > v[0] else None

    return {k: get(k) for k in ("recover", "execute", "verify", "write", "root")}


def launches(timeline):
    """Consecutive blocks whose recover spans abut: one GPU launch (the engine shares one
    launch's span out among its blocks)."""
    groups, last_end = [], None
    for b, block in enumerate(timeline):
        r = block["stages"].get("recover")
        if groups and r and last_end is not None and r[0] == last_end and groups[-1][-1] == b - 1:
            groups[-1].append(b)
        else:
            groups.append([b])
        last_end = r[1] if r else None
    return groups


def dur(sp):
    return 0 if sp is None else sp[1] - sp[0]


def replay(row, new, host_ns_per_tx):
    tl = row["timeline"]
    n = len(tl)
    sp = [spans(b) for b in tl]
    gpu = row["recovery"].startswith("gpu")
    # Senders ready per block.
    ready = [0.0] * n
    groups = launches(tl) if gpu else [[b] for b in range(n)]
    exec_start = [0.0] * n
    exec_end = [0.0] * n
    v_take = [0.0] * n
    v_end = [0.0] * n
    v_sent = [0.0] * n
    c_took = [0.0] * n
    w_end = [0.0] * n
    r_end = [0.0] * n
    launch_of = {}
    for k, g in enumerate(groups):
        for b in g:
            launch_of[b] = k
    launch_end = [None] * len(groups)

    def launch_ready(k):
        # Launch k's end (all of its blocks' senders arrive then).
        if launch_end[k] is not None:
            return launch_end[k]
        g = groups[k]
        recorded = max((sp[b]["recover"][1] for b in g if sp[b]["recover"]), default=0)
        if not (new and gpu and k > 0):
            launch_end[k] = recorded
            return recorded
        busy = sum(dur(sp[b]["recover"]) for b in g)
        txs = sum(tl[b]["txs"] for b in g)
        start = launch_ready(k - 1)
        # The queue to execution holds about one launch: launch k starts once execution took
        # the units of launch k-2.
        if k >= 2:
            start = max(start, exec_start[groups[k - 2][-1]])
        launch_end[k] = start + busy + txs * host_ns_per_tx
        return launch_end[k]

    for b in range(n):
        # Roots (the roots' thread): after the last block's root, and the roots' queue (one
        # unit) to the commit: after the commit stage took block b-2.
        r_start = r_end[b - 1] if b else 0.0
        if b >= 2:
            r_start = max(r_start, c_took[b - 2])
        r_end[b] = r_start + dur(sp[b]["root"])
        # Execution.
        s = max(exec_end[b - 1] if b else 0.0, launch_ready(launch_of[b]))
        if new:
            if b >= VERIFY_QUEUE + 1:
                s = max(s, v_take[b - VERIFY_QUEUE - 1])
        else:
            # The state handed over after the roots' thread computed block b-1's roots and
            # sent them (which waited for the commit stage to take block b-2's); the verify
            # queue of one unit.
            if b >= 2:
                s = max(s, c_took[b - 2])
            if b >= 1:
                s = max(s, r_end[b - 1])
            if b >= 2:
                s = max(s, v_take[b - 2])
        exec_start[b] = s
        exec_end[b] = s + dur(sp[b]["execute"])
        # Verification: in order; its queue to the commit holds one unit.
        v_take[b] = max(exec_end[b], v_sent[b - 1] if b else 0.0)
        v_end[b] = v_take[b] + dur(sp[b]["verify"])
        # The commit stage takes block b when verified and done with b-1; writes once its root
        # is in.
        c_took[b] = max(v_end[b], w_end[b - 1] if b else 0.0)
        v_sent[b] = max(v_end[b], c_took[b - 1] if b else 0.0)
        w_start = max(c_took[b], r_end[b])
        w_end[b] = w_start + dur(sp[b]["write"])
    return w_end[-1]


def printable(text):
    """`text` with every control character shown as an escape (a result file is input)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def fail(why):
    print(f"replay-deps: {printable(why)}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) not in (2, 3):
        fail("usage: scripts/replay-deps.py BENCH.json [HOST_US_PER_TX]")
    path = sys.argv[1]
    try:
        host_ns = float(sys.argv[2]) * 1e3 if len(sys.argv) > 2 else 1000.0
    except ValueError:
        fail(f"HOST_US_PER_TX {sys.argv[2]!r}: not a number of microseconds")
    if not (0.0 <= host_ns <= 1e6):
        fail(f"HOST_US_PER_TX {sys.argv[2]}: from 0 to 1000 microseconds")
    try:
        with open(path, "rb") as f:
            if f.seek(0, 2) > 256 << 20:
                fail(f"{path}: larger than 256 MiB, not a bench result")
            f.seek(0)
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: cannot read a bench JSON: {e}")
    if not isinstance(d, dict) or not isinstance(d.get("pipeline", []), list):
        fail(f"{path}: not a bench result (gigagas bench --json): no pipeline rows")
    try:
        replayed = rows(path, d, host_ns)
    except (KeyError, TypeError, IndexError, ValueError, ZeroDivisionError) as e:
        fail(f"{path}: a pipeline row lacks what the replay reads ({type(e).__name__}: {e})")
    except BrokenPipeError:
        sys.stderr.close()  # the reader left (`| head`): nothing more to say
        sys.exit(0)
    if replayed == 0:
        print(f"replay-deps: {path}: no overlapped in-memory pipeline row with a timeline "
              "(bench --root R --pipeline on --json)", file=sys.stderr)
        sys.exit(1)


def modelled(row):
    """Whether the replay's model is the engine's for `row`: a root none or incremental (a
    from-scratch root from a shipped list is rebuilt and hashed on the roots' thread, whose
    "write" span is then not the commit's) and a list (`bal none`'s root is the commit's)."""
    if row["root"] not in ("none", "incremental") or row.get("bal", "keys") == "none":
        return False
    # A write that ended before its block was verified was done on the roots' thread.
    return all(
        b["stages"]["write"][1] >= b["stages"]["verify"][1] for b in row["timeline"]
    )


def rows(path, d, host_ns):
    print(f"{printable(path)}: replay of each overlapped row's median timeline (ms)")
    print("threads | recovery | root | measured | replay, old deps (error) | replay, new deps | new / old")
    replayed = 0
    for row in d.get("pipeline", []):
        if not row["overlap"] or row.get("state", "memory") != "memory" or not row["timeline"]:
            continue
        if not modelled(row):
            print(f"{int(row['threads']):>7} | {printable(row['recovery'][:3]):>8} | "
                  f"{printable(row['root']):>11} | skipped: the replay models a root computed "
                  "on the roots' thread and a write in the commit (root none or incremental, "
                  "with a list)")
            continue
        replayed += 1
        measured = max(b["stages"]["write"][1] for b in row["timeline"])
        old = replay(row, False, host_ns)
        new = replay(row, True, host_ns)
        print(
            f"{int(row['threads']):>7} | {printable(row['recovery'][:3]):>8} | {printable(row['root']):>11} | {measured / 1e6:8.1f} | "
            f"{old / 1e6:8.1f} ({(old - measured) / measured * 100:+.1f}%) | {new / 1e6:8.1f} | {old / new:.2f}x"
        )
    return replayed


if __name__ == "__main__":
    main()
