#!/usr/bin/env python3
"""Writes Tests/Fixtures/import/perfetto-hangs.pftrace and its truth with Perfetto's own Python package
(PyPI `perfetto`, see make-perfetto-fixtures.py for a venv): perfetto-60hz.pftrace (one app's frames,
which make com.example.feed, pid 4242, the app) followed by packets of its own: atrace slices on the
app's main thread (4242) and RenderThread (4250), and an ANR as system_server marks it (the markers
trace_processor's stdlib android/anrs.sql reads: an `expired(...)` timer slice and the `ErrorId:` and
`Subject(for ErrorId ...)` counters, all atrace from system_server, pid 1000).

The truth is the scenario's own numbers below, never the trace read back.
"""
import json
import os
import sys

try:
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, Trace
except ImportError:
    sys.exit("make-perfetto-hang-fixture: needs PyPI 'perfetto'")

HERE = os.path.dirname(os.path.abspath(__file__))
APP_PID, RENDER_TID, SYSTEM_SERVER, SS_TID = 4242, 4250, 1000, 1017
MS = 1_000_000

base = open(os.path.join(HERE, "perfetto-60hz.pftrace"), "rb").read()
trace = Trace()
trace.ParseFromString(base)
start = min(p.timestamp for p in trace.packet if p.HasField("timestamp") and p.timestamp > 0)

# Slices: (thread, name, begin ms, duration ms, nested child (name, offset ms, duration ms) or None).
# All inside the base trace's span (its frames end near 1083 ms, the last one still in flight), apart
# from one another, so each is a stretch of its own.
SLICES = [
    (APP_PID, "inflate", 100, 300, ("ResourcesImpl#loadDrawable", 20, 200)),
    (APP_PID, "RV Scroll", 430, 150, None),
    (APP_PID, "traversal", 600, 60, None),
    (RENDER_TID, "DrawFrames", 300, 200, None),
]
# The timer's duration is the device's (AOSP's input dispatch timeout is 5 s; OEMs set their own): short
# here, to fit the base trace.
ANR_AT_MS, ANR_TIMER_MS, ERROR_ID = 1000, 300, "8a2c1d4e-0b5f-4c3e-9d71-2f6e8a0b1c3d"
SUBJECT = "Input dispatching timed out (com.example.feed/com.example.feed.MainActivity is not responding. Waited 300ms for MotionEvent)"

events = []  # (ts, tid, text)
for tid, name, begin, duration, child in SLICES:
    events.append((start + begin * MS, tid, f"B|{APP_PID}|{name}\n"))
    if child:
        events.append((start + (begin + child[1]) * MS, tid, f"B|{APP_PID}|{child[0]}\n"))
        events.append((start + (begin + child[1] + child[2]) * MS, tid, f"E|{APP_PID}\n"))
    events.append((start + (begin + duration) * MS, tid, f"E|{APP_PID}\n"))
timer_at = start + (ANR_AT_MS - 2) * MS
events.append((timer_at, SS_TID, f"B|{SYSTEM_SERVER}|expired(31,{APP_PID},10123,INPUT_DISPATCHING_TIMEOUT,{ANR_TIMER_MS})\n"))
events.append((timer_at + MS // 2, SS_TID, f"E|{SYSTEM_SERVER}\n"))
anr_at = start + ANR_AT_MS * MS
events.append((anr_at, SS_TID, f"C|{SYSTEM_SERVER}|ErrorId:com.example.feed {APP_PID}#{ERROR_ID}|1\n"))
events.append((anr_at, SS_TID, f"C|{SYSTEM_SERVER}|Subject(for ErrorId {ERROR_ID}):{SUBJECT}|1\n"))
events.sort(key=lambda e: e[0])

out = Trace()
p = out.packet.add()
p.timestamp = start + 50 * MS
proc = p.process_tree.processes.add(); proc.pid = SYSTEM_SERVER; proc.ppid = 1; proc.cmdline.append("system_server")
t = p.process_tree.threads.add(); t.tid = SS_TID; t.tgid = SYSTEM_SERVER; t.name = "AnrConsumer"
p = out.packet.add()
p.trusted_packet_sequence_id = 77
bundle = p.ftrace_events
bundle.cpu = 1
for ts, tid, text in events:
    ev = bundle.event.add(); ev.timestamp = ts; ev.pid = tid; ev.print.buf = text

with open(os.path.join(HERE, "perfetto-hangs.pftrace"), "wb") as f:
    f.write(base + out.SerializeToString())

# The truth: hangs of the app's main thread (a top-level slice of at least 100 ms; its nested slice and
# the RenderThread's are not), and the ANR, lasting its timer's duration up to the ANR.
by_type = {}
for tid, name, begin, duration, child in SLICES:
    if tid == APP_PID and duration >= 100:
        by_type[name] = {"count": 1, "totalMs": duration}
by_type["ANR"] = {"count": 1, "totalMs": ANR_TIMER_MS}
truth = {"source": "perfetto", "byType": by_type,
         "hangs": {"count": 2, "totalMs": 300 + ANR_TIMER_MS}, "brief": {"count": 1, "totalMs": 150}}
with open(os.path.join(HERE, "perfetto-hangs.truth.json"), "w") as f:
    json.dump(truth, f, indent=1, sort_keys=True)
    f.write("\n")
