#!/usr/bin/env python3
"""Writes the Perfetto fixtures in Tests/Fixtures/import/ with Perfetto's own Python package (PyPI
`perfetto`: its TracePacket protos and TraceProtoBuilder), and each trace's ground truth as JSON.

    bash -c 'python3 -m venv /tmp/pf && /tmp/pf/bin/pip install perfetto && /tmp/pf/bin/python scripts/make-perfetto-fixtures.py'
    python3 scripts/make-perfetto-fixtures.py --big 1024 /tmp/big.pftrace   # a 1 GB trace for the memory check

The package is installed at script time (never committed). Its TracePacket descriptor has no field
76 (`frame_timeline_event`, an Android-only proto), so the FrameTimelineEvent messages are encoded
here field by field from AOSP's frame_timeline_event.proto and attached to the packet as field 76;
everything else (track descriptors and events, interned names, ftrace print and sched_switch,
process trees, compressed_packets) is built with the package's protos.

Planted, at 60 and 120 Hz: app deadlines missed by 1, 2 and 3 periods; buffer stuffing after a late
frame; a compositor (SurfaceFlinger) miss; a dropped frame; an expired prediction; a frame still in
flight at the end. FrameTimeline packets are written in SurfaceFlinger's emit order (after each
frame is shown), not in time order. The ground truth applies docs/METRICS.md's rules: lateness =
present - (deadline + period), the triple-buffering rule, commit hitch when the app's hand-over is
after its deadline, render hitch otherwise; dropped and in-flight frames are not judged.
"""
import json
import os
import sys
import zlib

try:
    from perfetto.trace_builder.proto_builder import TraceProtoBuilder
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, Trace
except ImportError:
    sys.exit("make-perfetto-fixtures: needs PyPI 'perfetto' (see the docstring for a venv)")

APP_PID, RENDER_TID, SF_PID = 4242, 4250, 600
APP_SEQ, SF_SEQ, FTRACE_SEQ = 2, 3, 4
JANK_NONE, JANK_SF_CPU, JANK_APP, JANK_STUFFING, JANK_UNKNOWN, JANK_DROPPED = 1, 16, 64, 128, 256, 1024
ON_TIME, LATE, DROPPED = 1, 2, 4
VALID, EXPIRED = 1, 2


# FrameTimelineEvent, field by field (AOSP frame_timeline_event.proto).
def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, value):
    if isinstance(value, (bytes, str)):
        data = value.encode() if isinstance(value, str) else value
        return varint(number << 3 | 2) + varint(len(data)) + data
    return varint(number << 3) + varint(int(value))


def timeline(kind, **f):
    order = {
        1: ["cookie", "token", "pid"],
        2: ["cookie", "token", "pid", "present_type", "on_time_finish", "gpu_composition", "jank_type", "prediction_type"],
        3: ["cookie", "token", "display_frame_token", "pid", "layer_name"],
        4: ["cookie", "token", "display_frame_token", "pid", "layer_name", "present_type", "on_time_finish",
            "gpu_composition", "jank_type", "prediction_type", "is_buffer"],
        5: ["cookie"],
    }[kind]
    body = b"".join(field(i + 1, f[name]) for i, name in enumerate(order) if name in f)
    if kind == 4:
        body += field(15, 1)   # a field newer releases might add: importers must skip it
    return field(kind, body)


class Writer:
    def __init__(self):
        self.out = []   # (emit time, sequence number, packet)
        self.cookie = 1

    def add(self, emit_ns, packet):
        self.out.append((emit_ns, len(self.out), packet))

    def frame_timeline(self, ts, emit_ns, payload):
        p = TracePacket()
        p.timestamp = ts
        p.trusted_packet_sequence_id = SF_SEQ
        p.MergeFromString(field(76, payload))
        self.add(emit_ns, p)

    def next_cookie(self):
        self.cookie += 1
        return self.cookie


def scenario(period):
    """(frames, truth): frames in vsync order with their planted timing."""
    frames = []
    v = 10_000_000_000
    token = 1000

    def frame(kind, **k):
        nonlocal token
        token += 1
        f = dict(token=token, vsync=v, kind=kind, end=v + period // 2, present=v + 2 * period,
                 jank=JANK_NONE, present_type=ON_TIME, prediction=VALID, display_late=0)
        f.update(k)
        frames.append(f)
        return f

    def on_time(n):
        nonlocal v
        for _ in range(n):
            frame("on time")
            v += period

    def gap(n):
        nonlocal v
        v += n * period

    on_time(8)
    for k in (1, 2, 3):   # app deadline missed by k periods
        frame(f"app late by {k}", end=v + k * period + period // 2, present=v + (2 + k) * period, jank=JANK_APP, present_type=LATE)
        v += period
        gap(k + 2)
        on_time(4)
    # Buffer stuffing: one late frame, then two frames on time queued behind it, each shown one period late.
    frame("app late by 1, then stuffing", end=v + period + period // 2, present=v + 3 * period, jank=JANK_APP, present_type=LATE)
    v += period
    for _ in range(2):
        frame("buffer stuffing", present=v + 3 * period, jank=JANK_STUFFING, present_type=LATE)
        v += period
    gap(3)
    on_time(4)
    frame("compositor miss", present=v + 3 * period, jank=JANK_SF_CPU, present_type=LATE, display_late=1)
    v += period
    gap(2)
    on_time(4)
    frame("dropped", present=None, jank=JANK_DROPPED, present_type=DROPPED)
    v += period
    on_time(4)
    frame("expired prediction", end=v + period + period // 2, present=v + 3 * period, jank=JANK_UNKNOWN,
          present_type=LATE, prediction=EXPIRED)
    v += period
    gap(2)
    on_time(4)
    frame("in flight at the end", end=None, present=None)
    return frames


def truth(frames, period):
    out, previous, total_hitch, first_start, last_present = [], None, 0, None, None
    tolerance = period // 10
    for f in frames:
        if f["present"] is None:
            out.append(dict(token=f["token"], scenario=f["kind"], judged=False))
            continue
        expected = f["vsync"] + 2 * period
        lateness = f["present"] - expected
        if previous is not None and abs(previous - period) <= tolerance:
            hitch = 0 if abs(lateness - period) <= tolerance else max(0, lateness - period)
        else:
            hitch = max(0, lateness)
        previous = lateness
        commit_late = f["end"] > f["vsync"] + period
        kind = ("commit" if commit_late else "render") if hitch > 0 else ("latency" if lateness > 0 else "none")
        total_hitch += hitch
        first_start = f["vsync"] if first_start is None else first_start
        last_present = f["present"] if last_present is None else max(last_present, f["present"])
        out.append(dict(token=f["token"], scenario=f["kind"], judged=True, latenessNs=lateness, hitchNs=hitch, kind=kind,
                        androidJanky=f["jank"] not in (JANK_NONE, JANK_STUFFING)))
    animating_s = (last_present - first_start) / 1e9
    return dict(periodNs=period, frames=out, totalHitchNs=total_hitch,
                hitchTimeRatioMsPerS=total_hitch / 1e6 / animating_s)


def build(period, use_atrace, compress):
    w = Writer()
    frames = scenario(period)
    # Names: a process tree, and thread track descriptors for the app's threads.
    p = TracePacket()
    p.timestamp = frames[0]["vsync"] - 1_000_000
    proc = p.process_tree.processes.add(); proc.pid = APP_PID; proc.ppid = 1; proc.cmdline.append("com.example.feed")
    proc = p.process_tree.processes.add(); proc.pid = SF_PID; proc.ppid = 1; proc.cmdline.append("/system/bin/surfaceflinger")
    t = p.process_tree.threads.add(); t.tid = RENDER_TID; t.tgid = APP_PID; t.name = "RenderThread"
    t = p.process_tree.threads.add(); t.tid = APP_PID; t.tgid = APP_PID; t.name = "com.example.feed"
    w.add(0, p)
    for uuid, tid, name in ((11, APP_PID, "com.example.feed"), (12, RENDER_TID, "RenderThread")):
        p = TracePacket()
        p.trusted_packet_sequence_id = APP_SEQ
        p.track_descriptor.uuid = uuid
        p.track_descriptor.thread.pid = APP_PID
        p.track_descriptor.thread.tid = tid
        p.track_descriptor.thread.thread_name = name
        w.add(1, p)
    p = TracePacket()
    p.trusted_packet_sequence_id = APP_SEQ
    p.sequence_flags = 1
    e = p.interned_data.event_names.add(); e.iid = 1; e.name = "traversal"
    p.MergeFromString(field(999, 7))   # an unknown top-level packet field
    w.add(2, p)

    def slice_packets(tid, uuid, name, begin, end, interned=False):
        if use_atrace:
            for ts, text in ((begin, f"B|{APP_PID}|{name}\n"), (end, "E|{0}\n".format(APP_PID))):
                p = TracePacket()
                p.trusted_packet_sequence_id = FTRACE_SEQ
                b = p.ftrace_events
                b.cpu = 0
                ev = b.event.add(); ev.timestamp = ts; ev.pid = tid; ev.print.buf = text
                w.add(ts, p)
            return
        for ts, kind in ((begin, 1), (end, 2)):
            p = TracePacket()
            p.timestamp = ts
            p.trusted_packet_sequence_id = APP_SEQ
            p.track_event.type = kind
            p.track_event.track_uuid = uuid
            if kind == 1:
                if interned:
                    p.track_event.name_iid = 1
                else:
                    p.track_event.name = name
            w.add(ts, p)

    def sched(ts, prev_pid, prev_state, next_pid):
        p = TracePacket()
        p.trusted_packet_sequence_id = FTRACE_SEQ
        ev = p.ftrace_events.event.add()
        p.ftrace_events.cpu = 1
        ev.timestamp = ts; ev.pid = prev_pid
        ev.sched_switch.prev_pid = prev_pid; ev.sched_switch.prev_state = prev_state; ev.sched_switch.prev_comm = "x"
        ev.sched_switch.next_pid = next_pid; ev.sched_switch.next_comm = "y"
        w.add(ts, p)

    batches = []
    for f in frames:
        v, token = f["vsync"], f["token"]
        end = f["end"]
        ui_end = v + period // 4 if end is None else min(end - period // 8, v + period // 4 + (end - v - period // 2))
        sched(v, 0, 0, APP_PID)
        slice_packets(APP_PID, 11, f"Choreographer#doFrame {token}", v + period // 40, ui_end)
        slice_packets(APP_PID, 11, "traversal", v + period // 20, ui_end - period // 40, interned=True)
        sched(ui_end, APP_PID, 1, 0)
        if end is not None:
            slice_packets(RENDER_TID, 12, f"DrawFrame {token}", ui_end, end - period // 40)
        # SurfaceFlinger reports the frame once it is shown (or dropped), all packets at once.
        emit = (f["present"] or (end or v) + period) + 1_000_000
        display_token = 900_000 + token
        ft = []
        if f["prediction"] == VALID:
            c = w.next_cookie()
            ft.append((v, timeline(3, cookie=c, token=token, display_frame_token=display_token, pid=APP_PID, layer_name="com.example.feed/.Main#0")))
            ft.append((v + period, timeline(5, cookie=c)))
        c = w.next_cookie()
        ft.append((v, timeline(4, cookie=c, token=token, display_frame_token=display_token, pid=APP_PID, layer_name="com.example.feed/.Main#0",
                               present_type=f["present_type"], on_time_finish=1 if f["jank"] != JANK_APP else 0, gpu_composition=0,
                               jank_type=f["jank"], prediction_type=f["prediction"], is_buffer=1)))
        if end is None:   # still in flight: SurfaceFlinger has reported its start only
            emit = v + 3 * period
        else:
            ft.append((end, timeline(5, cookie=c)))
        if f["present"] is not None:
            present = f["present"]
            sf_start = present - period * (1 + f["display_late"])
            c1, c2 = w.next_cookie(), w.next_cookie()
            ft.append((sf_start, timeline(1, cookie=c1, token=display_token, pid=SF_PID)))
            ft.append((sf_start + period, timeline(5, cookie=c1)))
            ft.append((sf_start, timeline(2, cookie=c2, token=display_token, pid=SF_PID, present_type=f["present_type"],
                                          on_time_finish=1, gpu_composition=0, jank_type=f["jank"] if f["display_late"] else JANK_NONE,
                                          prediction_type=VALID)))
            ft.append((present, timeline(5, cookie=c2)))
            sched(sf_start, 0, 0, SF_PID)
            sched(sf_start + period // 3, SF_PID, 1, 0)
        if compress:
            batches.append((emit, ft))
        else:
            for ts, payload in ft:
                w.frame_timeline(ts, emit, payload)
    if compress:
        # compressed_packets: deflate (zlib) of a Trace holding the FrameTimeline packets of 6 frames.
        for i in range(0, len(batches), 6):
            group = batches[i:i + 6]
            trace = Trace()
            for _, ft in group:
                for ts, payload in ft:
                    q = trace.packet.add()
                    q.timestamp = ts
                    q.trusted_packet_sequence_id = SF_SEQ
                    q.MergeFromString(field(76, payload))
            p = TracePacket()
            p.trusted_packet_sequence_id = SF_SEQ
            p.compressed_packets = zlib.compress(trace.SerializeToString())
            w.add(max(e for e, _ in group), p)
    builder = TraceProtoBuilder()
    for _, _, packet in sorted(w.out, key=lambda x: (x[0], x[1])):
        builder.add_packet().CopyFrom(packet)
    return builder.serialize(), truth(frames, period)


def big(megabytes, path):
    """A trace of repeated 60 Hz frames (track events, ftrace, FrameTimeline) of about `megabytes`."""
    from perfetto.trace_builder.proto_builder import StreamingTraceProtoBuilder
    period = 16_666_667
    frames = scenario(period)[:-1]
    one, _ = build(period, False, False)
    span = frames[-1]["vsync"] + 4 * period - frames[0]["vsync"]
    trace = Trace()
    trace.ParseFromString(one)
    packets = list(trace.packet)
    written = 0
    with open(path, "wb") as f:
        stream = StreamingTraceProtoBuilder(f)
        repeat = 0
        while written < megabytes << 20:
            shift = repeat * span
            for packet in packets:
                q = TracePacket()
                q.CopyFrom(packet)
                if q.HasField("timestamp"):
                    q.timestamp += shift
                for ev in q.ftrace_events.event:
                    ev.timestamp += shift
                stream.write_packet(q)
                written += q.ByteSize() + 4
            repeat += 1
    # Tokens repeat across copies; the importer keys frames by (process, token, layer), and each
    # copy's frames complete before the next copy reuses their tokens.


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--big":
        big(int(sys.argv[2]), sys.argv[3])
        return
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Fixtures", "import")
    os.makedirs(out, exist_ok=True)
    for name, period, atrace, compress in (("perfetto-60hz", 16_666_667, False, False), ("perfetto-120hz", 8_333_333, True, True)):
        data, t = build(period, atrace, compress)
        with open(f"{out}/{name}.pftrace", "wb") as f:
            f.write(data)
        with open(f"{out}/{name}.truth.json", "w") as f:
            json.dump(t, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
