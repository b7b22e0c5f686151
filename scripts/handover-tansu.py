#!/usr/bin/env python3
"""The phases of each graceful handover run by scripts/handover-tansu.sh.

    python3 scripts/handover-tansu.py OUT [--runs]

Per run, from the successor's own log (neli's lines, stamped by the same
wall clock as the signal):
  dealt     signal -> the successor is dealt the role (its assignment)
  evidence  -> its first own heartbeat read back (neli's acquisition phase)
  lease     dealt -> its lease (the Acquired transition)
  total     signal -> lease
Then, per binary, the median, mean and maximum of each.
"""
import datetime
import os
import statistics
import sys


def stamp(text):
    """Seconds since the epoch of an RFC 3339 stamp in UTC, or None."""
    try:
        return datetime.datetime.strptime(text.rstrip("Z")[:26], "%Y-%m-%dT%H:%M:%S.%f").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    except ValueError:
        return None


def run_phases(run):
    """(dealt, evidence, lease, total) in seconds, or None with the reason."""
    try:
        signal = stamp(open(os.path.join(run, "signal_at")).read().strip())
        old = open(os.path.join(run, "old_leader")).read().strip()
    except OSError:
        return None, "the run ended before its signal (see the batch's output)"
    if signal is None:
        return None, "its signal_at holds no time"
    for name in sorted(os.listdir(run)):
        if not name.startswith("m") or not name.endswith(".log") or name == old:
            continue
        lines = open(os.path.join(run, name), errors="replace").read().splitlines()
        after = [l for l in lines if l[:4].isdigit() and (stamp(l.split()[0]) or 0) >= signal]
        dealt = next((l for l in after if "partitions assigned" in l and "partitions=[0]" in l), None)
        if dealt is None:
            continue
        rest = after[after.index(dealt):]
        evidence = next((l for l in rest if 'phase="evidence"' in l), None)
        acquired = next((l for l in rest if "event=Acquired" in l), None)
        if evidence is None or acquired is None:
            return None, f"{name} was dealt the role but did not lead"
        t_dealt, t_acq = stamp(dealt.split()[0]), stamp(acquired.split()[0])
        ev = float(evidence.rsplit("seconds=", 1)[1].split()[0])
        return (t_dealt - signal, ev, t_acq - t_dealt, t_acq - signal), None
    return None, "no successor was dealt the role"


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: handover-tansu.py OUT [--runs]")
    out, show_runs = sys.argv[1], "--runs" in sys.argv[2:]
    if not os.path.isdir(out):
        sys.exit(f"handover-tansu.py: {out} is not a batch's folder (give the OUT of handover-tansu.sh)")
    for tag in sorted(os.listdir(out)):
        runs = sorted((d for d in os.listdir(os.path.join(out, tag)) if d.startswith("run") and d[3:].isdigit()),
                      key=lambda d: int(d[3:]))
        rows = []
        for r in runs:
            phases, why = run_phases(os.path.join(out, tag, r))
            if phases is None:
                print(f"{tag} {r}: {why}")
                continue
            rows.append(phases)
            if show_runs:
                print(f"{tag} {r}: " + " ".join(f"{p:.3f}" for p in phases))
        if not rows:
            continue
        print(f"{tag}: {len(rows)} runs; median / mean / max in seconds")
        for i, name in enumerate(["dealt", "evidence", "lease", "total"]):
            col = [row[i] for row in rows]
            print(f"  {name:<9}{statistics.median(col):7.3f} {statistics.mean(col):7.3f} {max(col):7.3f}")


if __name__ == "__main__":
    main()
