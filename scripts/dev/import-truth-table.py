#!/usr/bin/env python3
"""Per importer, a table of inputs x figures x truth x agreement with the platform, for one or two
`hitch` binaries side by side (e.g. main's and a branch's):

    python3 scripts/dev/import-truth-table.py TRUTH_DIR BEFORE_HITCH [AFTER_HITCH]

TRUTH_DIR holds make-frametimeline-truth.py's traces and truth files (bash
scripts/support/perfetto-python.sh Tests/Fixtures/import/make-frametimeline-truth.py TRUTH_DIR). The other
inputs are the committed fixtures of Tests/Fixtures/import and a few made here from them (UTF-16 and
whole-device framestats dumps, a Time Profiler export in the pre-Xcode 27 form). Each binary imports
and analyzes each input on its own; a failure shows as its one-line error. Markdown on stdout.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "Tests/Fixtures/import")


def run(hitch, fmt, inputs, out):
    fxt = os.path.join(out, "t.fxt")
    r = subprocess.run([hitch, "import", fmt] + inputs + ["-o", fxt], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
    r = subprocess.run([hitch, "analyze", fxt, "--format", "json"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1]
    warnings = [l for l in subprocess.run([hitch, "import", fmt] + inputs + ["-o", fxt], capture_output=True, text=True).stderr.splitlines()
                if "warning" in l]
    return json.loads(r.stdout), "; ".join(w.split("warning: ", 1)[-1] for w in warnings)[:300]


def figures(a):
    if a is None:
        return "—"
    platform = a.get("platformHitches")
    source = next((h for h in a["hitches"].values() if h.get("source") == "platform"), None)
    if platform:
        return "platform: %d hitches, %.2f ms, longest %.2f ms, %.2f ms/s over %.2f s%s" % (
            platform["hitchCount"], platform["totalHitchMs"], platform["longestHitchMs"], platform["hitchTimeRatioMsPerS"],
            platform["spanSeconds"], ", %d system" % platform["systemHitchCount"] if platform["systemHitchCount"] else "")
    r = a["recorded"]
    app = r.get("appHitchTimeRatioMsPerS")
    text = "%d frames, %d hitches, %.2f ms (longest %.2f), %.2f ms/s%s" % (
        r["frameCount"], r["hitchCount"], r["totalHitchMs"], r["longestHitchMs"], r["hitchTimeRatioMsPerS"],
        ", app %.2f" % app if app is not None else "")
    if a["samples"]["folded"]:
        text += "; stacks: " + " | ".join(s["stack"] for s in a["samples"]["folded"][:2])
    return text


def agreement(a):
    if a is None or not a.get("platformAgreement"):
        return "—"
    p = a["platformAgreement"]
    return "%d/%d agree (%.1f%%)%s" % (p["bothJanky"] + p["bothOnTime"], p["frames"], 100 * p["agreementRatio"],
                                      "" if p.get("trusted", True) else ", NOT TRUSTED")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    truth_dir, binaries = sys.argv[1], sys.argv[2:]
    scratch = tempfile.mkdtemp(prefix="import-truth-")
    # Inputs made from the fixtures.
    text = open(os.path.join(FIX, "framestats-android12.txt"), encoding="utf-8").read()
    utf16 = os.path.join(scratch, "framestats-android12-utf16le-crlf.txt")
    open(utf16, "wb").write(b"\xff\xfe" + text.replace("\n", "\r\n").encode("utf-16-le"))
    header = "Flags,IntendedVsync,Vsync,OldestInputEvent,NewestInputEvent,HandleInputStart,AnimationStart,PerformTraversalsStart,DrawStart,SyncQueued,SyncStart,IssueDrawCommandsStart,SwapBuffers,FrameCompleted,"

    def block(window, n, start, late=()):
        rows = []
        for i in range(n):
            v = start + i * 16666667
            rows.append("0,%d,%d,0,0,0,0,0,0,0,0,0,0,%d," % (v, v, v + (25000000 if i in late else 5000000)))
        return "Window: %s\n---PROFILEDATA---\n%s\n%s\n---PROFILEDATA---\n" % (window, header, "\n".join(rows))
    device = os.path.join(scratch, "framestats-two-processes.txt")
    open(device, "w").write("** Graphics info for pid 100 [com.example.launcher] **\n" + block("Launcher", 30, 1000000000)
                            + "** Graphics info for pid 200 [com.example.feed] **\n" + block("Feed", 50, 2000000000, late=(10, 20))
                            + block("Dialog", 20, 3000000000))
    profile = os.path.join(ROOT, "Tests/Fuzz/corpus/xctrace/xctrace-time-profile-frame-names.xml")
    rows = [
        ("perfetto", [os.path.join(truth_dir, n + ".pftrace")], n, os.path.join(truth_dir, n + ".truth.json"))
        for n in ("frametimeline-60hz", "frametimeline-90hz", "frametimeline-120hz", "frametimeline-drift-90hz")
    ] + [
        ("perfetto", [os.path.join(FIX, "perfetto-60hz.pftrace")], "perfetto-60hz (old generator)", None),
        ("perfetto", [os.path.join(FIX, "perfetto-sched-60hz.pftrace"), "--process", "com.example.feed"], "perfetto-sched-60hz", None),
        ("xctrace", [os.path.join(FIX, "xctrace-hitches.xml")], "hitches table alone (6 Apple hitches, 108.33 ms)", None),
        ("xctrace", [os.path.join(FIX, "xctrace-hitches.xml"), os.path.join(FIX, "xctrace-display.xml")], "hitches + display", None),
        ("xctrace", [os.path.join(FIX, n) for n in ("xctrace-real-display-surface-swap.xml", "xctrace-real-display-vsyncs-interval.xml",
                                                    "xctrace-real-hitches-renders.xml")], "real export, 3 tables (12 frames, none late)", None),
        ("xctrace", [profile], "Time Profiler, <frame name=…> form (3 samples)", None),
        ("xctrace", [os.path.join(FIX, "xctrace-real-display-vsyncs-interval.xml")], "display-vsyncs-interval alone (nothing to analyze)", None),
        ("framestats", [os.path.join(FIX, "framestats-android12.txt")], "android12 (2 janky frames)", None),
        ("framestats", [utf16], "android12 as UTF-16 LE + CRLF", None),
        ("framestats", [device], "whole-device dump: 3 windows, Feed has the most frames (2 late)", None),
        ("framestats", [os.path.join(FIX, "framestats-android12.txt"), "--refresh", "90"], "android12 (60 Hz) with --refresh 90", None),
    ]
    print("| importer | input | truth | " + " | ".join("%s: figures | %s: agreement | %s: said" % (n, n, n) for n in
          ["before", "after"][:len(binaries)]) + " |")
    print("|---" * (3 + 3 * len(binaries)) + "|")
    for fmt, inputs, label, truth_path in rows:
        truth = "—"
        if truth_path:
            t = json.load(open(truth_path))
            truth = "%d frames, %d hitches, %.2f ms (longest %.2f), %.2f ms/s, app %.2f; platform agrees on %d/%d" % (
                t["framesJudged"], t["hitchCount"], t["totalHitchNs"] / 1e6, t["longestHitchNs"] / 1e6, t["hitchTimeRatioMsPerS"],
                t["appBlamedHitchNs"] / 1e6 / (t["animatingNs"] / 1e9), t["agreement"]["bothJanky"] + t["agreement"]["bothOnTime"],
                t["agreement"]["frames"])
        cells = []
        for hitch in binaries:
            out = tempfile.mkdtemp(dir=scratch)
            a, said = run(hitch, fmt, inputs, out)
            cells += [figures(a), agreement(a), said.replace("|", "/") or "—"]
        print("| %s | %s | %s | %s |" % (fmt, label, truth, " | ".join(cells)))


if __name__ == "__main__":
    main()
