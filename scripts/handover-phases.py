#!/usr/bin/env python3
"""The phases of every handover in a side-by-side batch (scripts/peer-bench.sh).

    python3 scripts/handover-phases.py OUT/results.jsonl [--runs]

For each run of the graceful, crash and pause scenarios, from the members' own
logs (librdkafka's `debug=cgrp` lines, neli's transitions, the CMD's ticks):

  leave    signal -> the old leader's LeaveGroup answered (graceful only)
  notice   leave (or the signal, for crash and pause) -> the new owner hears
           of the rebalance (its heartbeat answered "rebalance in progress";
           for crash and pause this includes the dead member's session expiry)
  join     -> the new owner's JoinGroup answered (the coordinator's hold)
  sync     -> its SyncGroup answered: the assignment
  lease    -> its lease (neli: the Acquired transition; goNELI: its barrier's
           "acquired" line): evidence read and, for neli, the membership proof
  tick     -> the CMD's (goNELI: the pulse loop's) first tick as leader

For crash and pause also, since neither is decided by the implementation
alone (BENCHMARKS.md, "Side by side at 905936c"):

  hb_age       the old leader's last group heartbeat before the signal: its
               session ends S after that heartbeat, not after the signal
  from_expiry  total - (S - hb_age): the takeover counted from the end of the
               old leader's session (S = 3 s, as the peer harness runs)

Prints one line per run with --runs, and the median of each phase per
implementation and scenario. The members' logs are stamped with the wall
clock and the ticks with CLOCK_MONOTONIC; the two are related by this
machine's offset between them now, so run it on the machine (and boot) that
ran the batch.
"""
import datetime
import json
import os
import re
import statistics
import sys
import time

PHASES = ["leave", "notice", "join", "sync", "lease", "tick"]
# Columns after the total, for crash and pause.
EXTRA = ["hb_age", "from_expiry"]
# The session timeout of every member the peer harness starts (README.txt there).
SESSION_S = 3.0
HEARTBEAT = "Heartbeat for group"
NELI_TS = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z")
RDK_TS = re.compile(r"^%\d\|(\d+\.\d+)\|")
# librdkafka's cgrp lines, the same in both implementations' logs.
MARKS = {
    "leave": "LeaveGroup response received",
    "notice": "Group rebalance in progress",
    "join": "JoinGroup response: GenerationId",
    "sync": "SyncGroup response: Success",
}


def wall_ns(line):
    """The wall-clock time of a log line, in ns since the epoch, or None."""
    m = NELI_TS.match(line)
    if m:
        stamp = datetime.datetime.fromisoformat(m.group(1)[:26]).replace(tzinfo=datetime.timezone.utc)
        return int(stamp.timestamp() * 1e9)
    m = RDK_TS.match(line)
    if m:
        return int(float(m.group(1)) * 1e9)
    return None


def first_after(path, mark, since):
    """The first line of `path` containing `mark` at or after `since` (wall ns)."""
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if mark in line:
                    t = wall_ns(line)
                    if t is not None and t >= since:
                        return t
    except OSError:
        pass
    return None


def last_before(path, mark, until):
    """The last line of `path` containing `mark` at or before `until` (wall ns)."""
    last = None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if mark in line:
                    t = wall_ns(line)
                    if t is not None and t <= until:
                        last = t
    except OSError:
        pass
    return last


def out_events(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.startswith("{")]
    except OSError:
        return []


def phases(res, offset):
    """The phase boundaries of one run (wall ns), or None when it has no handover."""
    starts = res.get("term_starts_after_fault") or []
    if not starts or res.get("t_fault") is None:
        return None
    d, new, old = res["dir"], starts[0][0], res["leader"]
    fault = res["t_fault"] + offset
    marks = {"signal": fault}
    at = fault
    if res["scenario"] == "graceful":
        at = first_after(os.path.join(d, f"{old}.err"), MARKS["leave"], fault) or fault
        marks["leave"] = at
    else:
        marks["heartbeat"] = last_before(os.path.join(d, f"{old}.err"), HEARTBEAT, fault)
    for name in ["notice", "join", "sync"]:
        t = first_after(os.path.join(d, f"{new}.err"), MARKS[name], at)
        marks[name] = t
        at = t if t is not None else at
    events = out_events(os.path.join(d, f"{new}.out"))
    acquired = first_after(os.path.join(d, f"{new}.err"), "event=Acquired", at)
    if acquired is None:  # goNELI: its barrier's line, on the monotonic clock
        acquired = next((e["mono_ns"] + offset for e in events
                         if e.get("event") == "acquired" and e["mono_ns"] + offset >= at), None)
    marks["lease"] = acquired
    marks["tick"] = next((e["mono_ns"] + offset for e in events
                          if e.get("event") == "lead_tick" and e["mono_ns"] + offset >= fault), None)
    return marks


def durations(marks):
    out, prev = {}, marks["signal"]
    for p in PHASES:
        t = marks.get(p)
        if t is None:
            continue
        out[p] = (t - prev) / 1e9
        prev = t
    out["total"] = (prev - marks["signal"]) / 1e9
    if marks.get("heartbeat") is not None:
        out["hb_age"] = (marks["signal"] - marks["heartbeat"]) / 1e9
        out["from_expiry"] = out["total"] - (SESSION_S - out["hb_age"])
    return out


def fail(message):
    """Says what is wrong on stderr and exits 2 (bad input)."""
    print(message, file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        fail(__doc__)
    per_run = "--runs" in sys.argv[2:]
    offset = time.time_ns() - time.monotonic_ns()
    rows = {}
    try:
        f = open(sys.argv[1])
    except OSError as e:
        fail(f"handover-phases: cannot read {sys.argv[1]}: {e.strerror} (give a batch's results.jsonl)")
    with f:
        for n, line in enumerate(f, 1):
            try:
                res = json.loads(line)
            except json.JSONDecodeError as e:
                fail(f"handover-phases: {sys.argv[1]} line {n} is not a JSON object: {e.msg}")
            if not isinstance(res, dict) or "dir" not in res:
                fail(f"handover-phases: {sys.argv[1]} line {n} is no run of the peer harness (no 'dir')")
            if res.get("scenario") not in ("graceful", "crash", "pause"):
                continue
            marks = phases(res, offset)
            if marks is None:
                continue
            ph = durations(marks)
            rows.setdefault((res["scenario"], res["impl"]), []).append(ph)
            if per_run:
                cells = " ".join(f"{p}={ph[p]:.3f}" for p in PHASES + ["total"] + EXTRA if p in ph)
                print(f"{res['scenario']:9} {res['impl']:28} run{res['run']}: {cells}")
    print(f"{'scenario':9} {'implementation':28} runs " + " ".join(f"{p:>7}" for p in PHASES + ["total"] + EXTRA))
    for (scenario, impl), phs in sorted(rows.items()):
        cells = []
        for p in PHASES + ["total"] + EXTRA:
            xs = [ph[p] for ph in phs if p in ph]
            cells.append(f"{statistics.median(xs):7.3f}" if xs else f"{'-':>7}")
        print(f"{scenario:9} {impl:28} {len(phs):4} " + " ".join(cells))
    print("(medians in seconds; each phase from the end of the one before; total = signal to the first tick;")
    print(" hb_age = the old leader's last group heartbeat before the signal; from_expiry = total - (S - hb_age))")


if __name__ == "__main__":
    main()
