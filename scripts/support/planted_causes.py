#!/usr/bin/env python3
"""Compares what Examples/PlantedCauses planted with what `hitch analyze --format json` judged.

  planted_causes.py compare MANIFEST ANALYSIS [--label L]   one JSON line per planted frame; exit 1 if any is wrong
  planted_causes.py table RESULTS...                        the table shape x planted cause x runs right

The expected cause of each planted kind is the rule of docs/METRICS.md "Hitch causes", written here
apart from the analyzer:
  mainWork                     appWork: the frame's own 40 ms on its CPU miss the deadline
  lockHeldBySleepingHelper     blocked: the main thread slept on a lock
  sleep                        blocked
  coldFileRead                 blocked: the main thread slept on the disk
  otherProcessHigherPriority   waitingForCPU: another process held the main thread's CPU
  appThreadHigherPriority      waitingForAppThreads, and cpuTakenBy names the app's hog thread
  longRender                   appWork for the long render's frame, which queues behind nothing;
                               every hitch right after it (from the next frame on, until the first
                               frame that does not hitch) keeps appWork and names it in queuedBehind
No planted frame is queued behind another frame: none was late because an earlier frame was.
"""
import json
import sys
from collections import defaultdict

EXPECTED = {
    "mainWork": "appWork",
    "lockHeldBySleepingHelper": "blocked",
    "sleep": "blocked",
    "coldFileRead": "blocked",
    "otherProcessHigherPriority": "waitingForCPU",
    "appThreadHigherPriority": "waitingForAppThreads",
    "longRender": "appWork",
}
HOG_THREAD = "planted.hog"
# The hog spins 60 ms at nice -15 on the main thread's CPU: the frame's wait behind it is most of
# a period or more. Less than this is not "named with its on-CPU ms".
HOG_MIN_MS = 5.0
FOLLOWERS_MAX = 4


def judge(manifest, analysis):
    frames = {f["frameID"]: f for f in analysis.get("frames", []) if f.get("run", 0) == 0}
    attributions = {a["frameID"]: a for a in analysis.get("hitchAttributions", []) if a.get("run", 0) == 0}
    verdicts = []
    for plant in manifest["plants"]:
        frame_id, kind = plant["frame"], plant["kind"]
        frame = frames.get(frame_id)
        verdict = {"shape": manifest["shape"], "kind": kind, "frame": frame_id, "right": False}
        if frame is None:
            verdict["why"] = "frame not in frames[]"
            verdicts.append(verdict)
            continue
        verdict["hitchMs"] = frame.get("hitchMs", 0)
        verdict["cause"] = frame.get("cause")
        verdict["queuedBehind"] = frame.get("queuedBehind")
        problems = []
        if frame.get("hitchMs", 0) <= 0:
            problems.append("not a hitch")
        if frame.get("cause") != EXPECTED[kind]:
            problems.append(f"cause {frame.get('cause')}, planted {EXPECTED[kind]}")
        if frame.get("queuedBehind") is not None:
            problems.append(f"queued behind frame {frame['queuedBehind']}")
        if kind == "appThreadHigherPriority":
            attribution = attributions.get(frame_id)
            taken = [t for t in (attribution or {}).get("cpuTakenBy", []) if t["name"] == HOG_THREAD]
            verdict["hogMs"] = taken[0]["ms"] if taken else 0
            if attribution is None:
                problems.append("no hitchAttributions entry")
            elif not taken or taken[0]["ms"] < HOG_MIN_MS:
                problems.append(f"cpuTakenBy does not name {HOG_THREAD} with its time "
                                f"({[(t['name'], t['ms']) for t in attribution.get('cpuTakenBy', [])]})")
        if kind == "longRender":
            followers = []
            next_id = frame_id + 1
            while next_id in frames and frames[next_id].get("hitchMs", 0) > 0 and len(followers) < FOLLOWERS_MAX:
                follower = frames[next_id]
                followers.append({"frame": next_id, "cause": follower.get("cause"),
                                  "queuedBehind": follower.get("queuedBehind")})
                next_id += 1
            verdict["followers"] = followers
            if not followers:
                problems.append("no frame after it hitched (nothing queued behind it)")
            for follower in followers:
                if follower["cause"] != "appWork" or follower["queuedBehind"] != frame_id:
                    problems.append(f"frame {follower['frame']}: {follower['cause']}, queued behind "
                                    f"{follower['queuedBehind']} (planted: appWork behind {frame_id})")
        verdict["right"] = not problems
        if problems:
            verdict["why"] = "; ".join(problems)
        verdicts.append(verdict)
    return verdicts


def compare(args):
    label = None
    if "--label" in args:
        index = args.index("--label")
        label = args[index + 1]
        args = args[:index] + args[index + 2:]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(args[0]) as f:
            manifest = json.load(f)
        with open(args[1]) as f:
            analysis = json.load(f)
    except (OSError, ValueError) as error:
        print(f"planted_causes.py: {error}", file=sys.stderr)
        return 2
    wrong = 0
    for verdict in judge(manifest, analysis):
        if label is not None:
            verdict["label"] = label
        print(json.dumps(verdict, sort_keys=True))
        wrong += not verdict["right"]
    return 1 if wrong else 0


def table(paths):
    """Reads compare's lines (with labels) and prints shape x kind x label: right/runs."""
    counts = defaultdict(lambda: [0, 0])
    labels, shapes = [], []
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                verdict = json.loads(line)
                label = verdict.get("label", "")
                if label not in labels:
                    labels.append(label)
                if verdict["shape"] not in shapes:
                    shapes.append(verdict["shape"])
                cell = counts[(verdict["shape"], verdict["kind"], label)]
                cell[0] += verdict["right"]
                cell[1] += 1
    header = ["shape", "planted"] + labels
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for shape in shapes:
        for kind in EXPECTED:
            cells = [f"{counts[(shape, kind, label)][0]}/{counts[(shape, kind, label)][1]}"
                     if (shape, kind, label) in counts else "-" for label in labels]
            print(f"| {shape} | {kind} | " + " | ".join(cells) + " |")
    return 0


def main(argv):
    if len(argv) >= 2 and argv[1] == "compare":
        return compare(argv[2:])
    if len(argv) >= 3 and argv[1] == "table":
        return table(argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
