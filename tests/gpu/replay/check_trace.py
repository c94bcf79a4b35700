#!/usr/bin/env python3
"""check_trace.py: checks a trace written by `sgcap replay --trace`.

  check_trace.py TRACE.json --tracks N [--overlap LABEL_A LABEL_B]

Passes (exit 0) when the file is Chrome/Perfetto trace JSON whose complete
("X") events lie on exactly N tracks, every track is named by a
thread_name record, and, with --overlap, some event on the track named
LABEL_A overlaps some event on the track named LABEL_B in time: the fork
branches really ran side by side. Prints what it found either way."""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--tracks", type=int, required=True)
    ap.add_argument("--overlap", nargs=2, metavar=("A", "B"))
    a = ap.parse_args()
    with open(a.trace) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = {}
    for e in events:
        if e.get("ph") != "X":
            continue
        for k in ("ts", "dur", "tid", "name"):
            if k not in e:
                print(f"check_trace: an X event lacks {k}: {e}")
                return 1
        spans.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"], e["name"]))
    print("check_trace: tracks with events: " +
          ", ".join(f"{names.get(t, '?')} (tid {t}, {len(v)} events)"
                    for t, v in sorted(spans.items())))
    ok = True
    if len(spans) != a.tracks:
        print(f"check_trace: {len(spans)} tracks have events, expected {a.tracks}")
        ok = False
    unnamed = [t for t in spans if t not in names]
    if unnamed:
        print(f"check_trace: tracks without a thread_name: {unnamed}")
        ok = False
    if a.overlap:
        by_label = {names.get(t): v for t, v in spans.items()}
        la, lb = a.overlap
        if la not in by_label or lb not in by_label:
            print(f"check_trace: no events on {la} or {lb}")
            return 1
        best = 0.0
        for s1, e1, n1 in by_label[la]:
            for s2, e2, n2 in by_label[lb]:
                best = max(best, min(e1, e2) - max(s1, s2))
        print(f"check_trace: largest overlap between {la} and {lb}: {best:.3f} us")
        if best <= 0:
            print("check_trace: the two tracks never ran at the same time")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
