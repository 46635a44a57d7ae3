#!/usr/bin/env python3
"""Writes the Perfetto fixtures in Tests/Fixtures/import/ with Perfetto's own Python package (PyPI
`perfetto`: its TracePacket protos and TraceProtoBuilder), and each trace's ground truth as JSON.

    bash -c 'python3 -m venv /tmp/pf && /tmp/pf/bin/pip install perfetto && /tmp/pf/bin/python Tests/Fixtures/import/make-perfetto-fixtures.py'
    python3 Tests/Fixtures/import/make-perfetto-fixtures.py --big 1024 /tmp/big.pftrace   # a 1 GB trace for the memory check

The package is installed at script time (never committed). Its TracePacket descriptor has no field
76 (`frame_timeline_event`, an Android-only proto), so the FrameTimelineEvent messages are encoded
here field by field from AOSP's frame_timeline_event.proto and attached to the packet as field 76;
everything else (track descriptors and events, interned names, ftrace print and sched_switch,
process trees, compressed_packets) is built with the package's protos.

perfetto-sched-60hz holds ftrace scheduling (CPU 0 as compact_sched, CPU 1 as sched_switch and
sched_waking), doFrame and DrawFrames slices, and a second app's frames: janky frames whose cause
is planted (the main thread's own work; runnable behind another process, behind the app's own
worker, preempted by another process; asleep), each frame's truth carrying that cause.

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


def thread_tracks(w):
    """Track descriptors of the app's main thread (uuid 11) and RenderThread (uuid 12)."""
    for uuid, tid, name in ((11, APP_PID, "com.example.feed"), (12, RENDER_TID, "RenderThread")):
        p = TracePacket()
        p.trusted_packet_sequence_id = APP_SEQ
        p.track_descriptor.uuid = uuid
        p.track_descriptor.thread.pid = APP_PID
        p.track_descriptor.thread.tid = tid
        p.track_descriptor.thread.thread_name = name
        w.add(1, p)


def track_slice(w, uuid, name, begin, end, name_iid=None):
    """A track-event slice on a thread track: begin (named, or by interned name) and end packets."""
    for ts, kind in ((begin, 1), (end, 2)):
        p = TracePacket()
        p.timestamp = ts
        p.trusted_packet_sequence_id = APP_SEQ
        p.track_event.type = kind
        p.track_event.track_uuid = uuid
        if kind == 1:
            if name_iid is not None:
                p.track_event.name_iid = name_iid
            else:
                p.track_event.name = name
        w.add(ts, p)


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
    thread_tracks(w)
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
        track_slice(w, uuid, name, begin, end, name_iid=1 if interned else None)

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


# The scheduling fixture: causes with a known truth (docs/METRICS.md "Hitch causes").
MAIN, RT, WORKER, OTHER_PID, OTHER_APP = APP_PID, RENDER_TID, 4260, 900, 5151
MS = 1_000_000
R_PREEMPTED, S_SLEEPING = 0x100, 1   # prev_state: TASK_RUNNING with Linux 4.14's preemption mark; TASK_INTERRUPTIBLE


def sched_scenario(period):
    """Frames at 60 Hz, each with the main thread's, the RenderThread's and other threads' CPU time
    planted (ms after the vsync), and the cause the analysis must find."""
    frames, v, token = [], 10_000_000_000, 2000

    def frame(kind, runs, wakes, do_frame, draw, end, late, cause=None):
        nonlocal token
        token += 1
        frames.append(dict(token=token, vsync=v, kind=kind, runs=runs, wakes=wakes, do_frame=do_frame, draw=draw,
                           end=v + int(end * MS), present=v + (3 if late else 2) * period,
                           jank=JANK_APP if late else JANK_NONE, present_type=LATE if late else ON_TIME,
                           prediction=VALID, display_late=0, cause=cause))

    def on_time(n):
        nonlocal v
        for _ in range(n):
            frame("on time", runs=[(0, MAIN, 0.1, 4.0, S_SLEEPING), (1, RT, 4.0, 7.0, S_SLEEPING)],
                  wakes=[(MAIN, 0.0, 0), (RT, 3.9, 1)], do_frame=(0.2, 3.9), draw=(4.1, 6.9), end=8.0, late=False)
            v += period

    def late(kind, cause, runs, wakes, do_frame, draw, end):
        nonlocal v
        frame(kind, runs=runs, wakes=wakes, do_frame=do_frame, draw=draw, end=end, late=True, cause=cause)
        v += period
        v += 3 * period
        on_time(4)

    on_time(6)
    # The main thread runs 21.8 ms: its own work misses the deadline.
    late("app work", "appWork", runs=[(0, MAIN, 0.1, 22.0, S_SLEEPING), (1, RT, 22.0, 25.0, S_SLEEPING)],
         wakes=[(MAIN, 0.0, 0), (RT, 21.9, 1)], do_frame=(0.2, 21.9), draw=(22.1, 24.9), end=26.0)
    # Woken at the vsync, the main thread waits 15 ms for CPU 0 behind another process (logd).
    late("runnable behind another process", "waitingForCPU",
         runs=[(0, OTHER_PID, -1.0, 15.0, S_SLEEPING), (0, MAIN, 15.0, 19.0, S_SLEEPING), (1, RT, 19.0, 22.0, S_SLEEPING)],
         wakes=[(OTHER_PID, -1.1, 0), (MAIN, 0.0, 0), (RT, 18.9, 1)], do_frame=(15.1, 18.9), draw=(19.1, 21.9), end=23.0)
    # The same wait, behind the app's own worker thread.
    late("runnable behind the app's worker", "waitingForAppThreads",
         runs=[(0, WORKER, -1.0, 15.0, S_SLEEPING), (0, MAIN, 15.0, 19.0, S_SLEEPING), (1, RT, 19.0, 22.0, S_SLEEPING)],
         wakes=[(WORKER, -1.1, 0), (MAIN, 0.0, 0), (RT, 18.9, 1)], do_frame=(15.1, 18.9), draw=(19.1, 21.9), end=23.0)
    # Preempted 2 ms into its frame by another process for 14 ms.
    late("preempted by another process", "waitingForCPU",
         runs=[(0, MAIN, 0.1, 2.0, R_PREEMPTED), (0, OTHER_PID, 2.0, 16.0, S_SLEEPING), (0, MAIN, 16.0, 19.0, S_SLEEPING),
               (1, RT, 19.0, 22.0, S_SLEEPING)],
         wakes=[(MAIN, 0.0, 0), (OTHER_PID, 1.9, 0), (RT, 18.9, 1)], do_frame=(0.2, 18.9), draw=(19.1, 21.9), end=23.0)
    # Asleep 15 ms inside its frame (a binder call, a lock), then woken.
    late("blocked", "blocked",
         runs=[(0, MAIN, 0.1, 2.0, S_SLEEPING), (0, MAIN, 17.05, 19.0, S_SLEEPING), (1, RT, 19.0, 22.0, S_SLEEPING)],
         wakes=[(MAIN, 0.0, 0), (MAIN, 17.0, 0), (RT, 18.9, 1)], do_frame=(0.2, 18.9), draw=(19.1, 21.9), end=23.0)
    return frames


def build_sched(period):
    """A 60 Hz trace with ftrace scheduling (CPU 0 as compact_sched, CPU 1 as sched_switch and
    sched_waking events), doFrame and DrawFrames slices on the app's threads, and a second app
    (com.other.app) with frames of its own, so only `--process` picks one."""
    w = Writer()
    frames = sched_scenario(period)
    p = TracePacket()
    p.timestamp = frames[0]["vsync"] - 10 * MS
    for pid, name in ((APP_PID, "com.example.feed"), (SF_PID, "/system/bin/surfaceflinger"), (OTHER_PID, "/system/bin/logd"),
                      (OTHER_APP, "com.other.app")):
        proc = p.process_tree.processes.add(); proc.pid = pid; proc.ppid = 1; proc.cmdline.append(name)
    for tid, tgid, name in ((MAIN, APP_PID, "com.example.feed"), (RT, APP_PID, "RenderThread"), (WORKER, APP_PID, "worker"),
                            (OTHER_PID, OTHER_PID, "logd"), (OTHER_APP, OTHER_APP, "com.other.app")):
        t = p.process_tree.threads.add(); t.tid = tid; t.tgid = tgid; t.name = name
    w.add(0, p)
    thread_tracks(w)

    runs = {0: [], 1: []}    # cpu -> (start, end, tid, prev_state at its end)
    wakes = {0: [], 1: []}   # cpu recorded on -> (ts, pid, target cpu)
    for f in frames:
        v = f["vsync"]
        at = lambda ms: v + int(round(ms * MS))
        for cpu, tid, start, end, state in f["runs"]:
            runs[cpu].append((at(start), at(end), tid, state))
        for tid, ms, cpu in f["wakes"]:
            wakes[cpu].append((at(ms), tid, cpu))
        track_slice(w, 11, f"Choreographer#doFrame {f['token']}", at(f["do_frame"][0]), at(f["do_frame"][1]))
        track_slice(w, 12, f"DrawFrames {f['token']}", at(f["draw"][0]), at(f["draw"][1]))

    # Each CPU's switches: to each run's thread at its start (from the previous run's thread when it
    # ends then, else from idle), and to idle at a run's end when no run follows at once.
    switches = {}
    for cpu, list_ in runs.items():
        out, current, state, until = [], 0, 0, None
        for start, end, tid, end_state in sorted(list_):
            if current and until < start:
                out.append((until, current, state, 0))
                current = 0
            out.append((start, current, state if current else 0, tid))
            current, state, until = tid, end_state, end
        if current:
            out.append((until, current, state, 0))
        switches[cpu] = out

    # Bundles of 20 ms per CPU, written 1 ms after their window (traced reads ftrace periodically).
    first = frames[0]["vsync"] - 5 * MS
    last = frames[-1]["vsync"] + 5 * period
    window = 20 * MS
    start = first
    while start < last:
        end = start + window
        for cpu in (0, 1):
            sw = [s for s in switches[cpu] if start <= s[0] < end]
            wk = [k for k in wakes[cpu] if start <= k[0] < end]
            if not sw and not wk:
                continue
            p = TracePacket()
            p.trusted_packet_sequence_id = FTRACE_SEQ
            b = p.ftrace_events
            b.cpu = cpu
            if cpu == 0:
                c = b.compact_sched
                c.intern_table.append("")
                previous = 0
                for ts, _prev, prev_state, nxt in sw:
                    c.switch_timestamp.append(ts - previous); previous = ts
                    c.switch_prev_state.append(prev_state)
                    c.switch_next_pid.append(nxt)
                    c.switch_next_prio.append(120)
                    c.switch_next_comm_index.append(0)
                previous = 0
                for ts, pid, target in wk:
                    c.waking_timestamp.append(ts - previous); previous = ts
                    c.waking_pid.append(pid)
                    c.waking_target_cpu.append(target)
                    c.waking_prio.append(120)
                    c.waking_comm_index.append(0)
                    c.waking_common_flags.append(1)
            else:
                for kind, item in sorted([(0, x) for x in wk] + [(1, x) for x in sw], key=lambda e: (e[1][0], e[0])):
                    ev = b.event.add()
                    ev.timestamp = item[0]
                    if kind == 0:
                        ev.pid = 0
                        ev.sched_waking.pid = item[1]; ev.sched_waking.comm = "t"; ev.sched_waking.prio = 120
                        ev.sched_waking.success = 1; ev.sched_waking.target_cpu = item[2]
                    else:
                        ev.pid = item[1]
                        ss = ev.sched_switch
                        ss.prev_pid = item[1]; ss.prev_state = item[2]; ss.prev_comm = "x"
                        ss.next_pid = item[3]; ss.next_comm = "y"; ss.next_prio = 120
            w.add(end + MS, p)
        start = end

    def timeline_frame(token, pid, layer, v, end, present, present_type, jank, display_late=0):
        display_token = 900_000 + token
        ft = []
        c = w.next_cookie()
        ft.append((v, timeline(3, cookie=c, token=token, display_frame_token=display_token, pid=pid, layer_name=layer)))
        ft.append((v + period, timeline(5, cookie=c)))
        c = w.next_cookie()
        ft.append((v, timeline(4, cookie=c, token=token, display_frame_token=display_token, pid=pid, layer_name=layer,
                               present_type=present_type, on_time_finish=1 if jank != JANK_APP else 0, gpu_composition=0,
                               jank_type=jank, prediction_type=VALID, is_buffer=1)))
        ft.append((end, timeline(5, cookie=c)))
        sf_start = present - period * (1 + display_late)
        c1, c2 = w.next_cookie(), w.next_cookie()
        ft.append((sf_start, timeline(1, cookie=c1, token=display_token, pid=SF_PID)))
        ft.append((sf_start + period, timeline(5, cookie=c1)))
        ft.append((sf_start, timeline(2, cookie=c2, token=display_token, pid=SF_PID, present_type=present_type, on_time_finish=1,
                                      gpu_composition=0, jank_type=JANK_NONE, prediction_type=VALID)))
        ft.append((present, timeline(5, cookie=c2)))
        for ts, payload in ft:
            w.frame_timeline(ts, present + MS, payload)

    for f in frames:
        timeline_frame(f["token"], APP_PID, "com.example.feed/.Main#0", f["vsync"], f["end"], f["present"], f["present_type"], f["jank"])
    # The other app: on-time frames of its own (tokens of its own), every fourth vsync.
    other = 0
    for i, f in enumerate(frames):
        if i % 4 == 0:
            other += 1
            timeline_frame(70_000 + i, OTHER_APP, "com.other.app/com.other.app.Main#0", f["vsync"], f["vsync"] + 5 * MS,
                           f["vsync"] + 2 * period, ON_TIME, JANK_NONE)
    builder = TraceProtoBuilder()
    for _, _, packet in sorted(w.out, key=lambda x: (x[0], x[1])):
        builder.add_packet().CopyFrom(packet)
    t = truth(frames, period)
    for entry, f in zip(t["frames"], frames):
        entry["cause"] = f["cause"]
    t["app"] = dict(pid=APP_PID, name="com.example.feed", frames=len(frames))
    t["otherApp"] = dict(pid=OTHER_APP, name="com.other.app", frames=other)
    return builder.serialize(), t


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
    out = os.path.dirname(os.path.abspath(__file__))
    for name, period, atrace, compress in (("perfetto-60hz", 16_666_667, False, False), ("perfetto-120hz", 8_333_333, True, True)):
        data, t = build(period, atrace, compress)
        with open(f"{out}/{name}.pftrace", "wb") as f:
            f.write(data)
        with open(f"{out}/{name}.truth.json", "w") as f:
            json.dump(t, f, indent=1)
            f.write("\n")
    data, t = build_sched(16_666_667)
    with open(f"{out}/perfetto-sched-60hz.pftrace", "wb") as f:
        f.write(data)
    with open(f"{out}/perfetto-sched-60hz.truth.json", "w") as f:
        json.dump(t, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
