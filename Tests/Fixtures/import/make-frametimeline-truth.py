#!/usr/bin/env python3
"""Simulates an Android display pipeline the way SurfaceFlinger's FrameTimeline sees it, writes what
FrameTimeline would trace as a Perfetto trace (PyPI `perfetto`'s own protos), and writes the
simulation's own numbers as the truth each trace is judged against.

    bash scripts/support/perfetto-python.sh Tests/Fixtures/import/make-frametimeline-truth.py OUTDIR

This generator is written from the platform's sources, not from Hitch's importer:

- frameworks/native services/surfaceflinger/FrameTimeline/FrameTimeline.cpp: what is traced and
  when (a display frame and every surface frame it latched or dropped, once its present fence
  signals: expected timeline, actual timeline, then each surface frame's two); the legacy jank
  classification of display and surface frames (present and deadline thresholds, buffer stuffing
  from the previous latch, SurfaceFlinger stuffing, display HAL, prediction error, scheduling);
  expired predictions (no expected timeline, the actual start a little before the end, App
  Deadline Missed); the surface frame's present delay, written as `present_delay_millis` by newer
  builds.
- The vsync model SurfaceFlinger's scheduler gives each token: an app token predicts
  {wake-up = present - sf - app, deadline = present - sf, present}; SurfaceFlinger's own
  {wake-up = present - sf, ready = present, present}. So a surface frame's expected present is its
  expected end plus SurfaceFlinger's expected duration.
- trace_processor's frame_timeline_event_parser.cc: the jank tag of a surface frame (Self Jank,
  Other Jank, Dropped Frame, Buffer Stuffing, SurfaceFlinger Stuffing, No Jank).
- The FrameTimelineEvent message (frameworks_native_trace_packet.proto, TracePacket field 76),
  which the wheel does not declare: declared below from its field numbers as an extension of the
  wheel's TracePacket, so every packet is serialized by protobuf itself.

Truth (per frame, from the simulation, never read back from the trace):
- `expectedPresentNs`: the vsync the app's token aimed at; `presentNs`: the vsync the display
  showed it (the present fence); `handOverNs`: when its buffer was ready (max of GPU done and queue).
- The display's view of hitches: walking the display's vsyncs, a vsync at which no new frame of the
  app was shown while a frame of the app was due (its expected present passed) is a missed refresh;
  it belongs to the earliest such frame still unshown. A shown frame's `hitchNs` is its missed
  refreshes times the period; the rest of its lateness (presentNs - expectedPresentNs) is
  `latencyNs` (it waited behind a frame ahead of it: buffer stuffing). Refreshes missed by a frame
  that was later dropped are `droppedRefreshes` (no frame of the app's was judged there).
- `kind`: `commit` when the frame's own buffer was ready after its deadline, else `render`.
- The platform side: what SurfaceFlinger's legacy classification gives the frame (jank type bits,
  present type, severity, GPU composition) and the tag trace_processor derives; `platformJanky` =
  tag Self Jank or Other Jank; `blame` app (Self) or compositor (Other).
- Totals: frames judged (shown and not in flight), hitches, total and longest hitch, the hitch time
  ratio over the animating time (the first judged frame's expected start to the last judged
  present), and the per-frame agreement counts of Hitch's truth against the platform's verdict.
"""
import json
import os
import sys
import zlib

try:
    from google.protobuf import descriptor_pb2, message_factory
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, Trace
except ImportError:
    sys.exit("make-frametimeline-truth: needs PyPI 'perfetto' (run it through scripts/support/perfetto-python.sh)")

# --- FrameTimelineEvent, declared from the proto's field numbers ------------------------------------

F = descriptor_pb2.FieldDescriptorProto
_FIELDS = {
    "ExpectedDisplayFrameStart": [("cookie", 1, F.TYPE_INT64), ("token", 2, F.TYPE_INT64), ("pid", 3, F.TYPE_INT32)],
    "ActualDisplayFrameStart": [("cookie", 1, F.TYPE_INT64), ("token", 2, F.TYPE_INT64), ("pid", 3, F.TYPE_INT32),
                                ("present_type", 4, F.TYPE_INT32), ("on_time_finish", 5, F.TYPE_BOOL),
                                ("gpu_composition", 6, F.TYPE_BOOL), ("jank_type", 7, F.TYPE_INT32),
                                ("prediction_type", 8, F.TYPE_INT32), ("jank_severity_type", 9, F.TYPE_INT32),
                                ("present_delay_millis", 10, F.TYPE_FLOAT)],
    "ExpectedSurfaceFrameStart": [("cookie", 1, F.TYPE_INT64), ("token", 2, F.TYPE_INT64),
                                  ("display_frame_token", 3, F.TYPE_INT64), ("pid", 4, F.TYPE_INT32),
                                  ("layer_name", 5, F.TYPE_STRING)],
    "ActualSurfaceFrameStart": [("cookie", 1, F.TYPE_INT64), ("token", 2, F.TYPE_INT64),
                                ("display_frame_token", 3, F.TYPE_INT64), ("pid", 4, F.TYPE_INT32),
                                ("layer_name", 5, F.TYPE_STRING), ("present_type", 6, F.TYPE_INT32),
                                ("on_time_finish", 7, F.TYPE_BOOL), ("gpu_composition", 8, F.TYPE_BOOL),
                                ("jank_type", 9, F.TYPE_INT32), ("prediction_type", 10, F.TYPE_INT32),
                                ("is_buffer", 11, F.TYPE_BOOL), ("jank_severity_type", 12, F.TYPE_INT32),
                                ("present_delay_millis", 13, F.TYPE_FLOAT)],
    "FrameEnd": [("cookie", 1, F.TYPE_INT64)],
}
_ONEOF = [("expected_display_frame_start", 1, "ExpectedDisplayFrameStart"),
          ("actual_display_frame_start", 2, "ActualDisplayFrameStart"),
          ("expected_surface_frame_start", 3, "ExpectedSurfaceFrameStart"),
          ("actual_surface_frame_start", 4, "ActualSurfaceFrameStart"),
          ("frame_end", 5, "FrameEnd")]


def _declare():
    pool = TracePacket.DESCRIPTOR.file.pool
    name = "hitch_frame_timeline_event_decl.proto"
    try:
        file = pool.FindFileByName(name)
    except KeyError:
        proto = descriptor_pb2.FileDescriptorProto(name=name, package="com.android.internal", syntax="proto2",
                                                   dependency=[TracePacket.DESCRIPTOR.file.name])
        event = proto.message_type.add(name="FrameTimelineEvent")
        for nested, fields in _FIELDS.items():
            message = event.nested_type.add(name=nested)
            for field_name, number, kind in fields:
                message.field.add(name=field_name, number=number, type=kind, label=F.LABEL_OPTIONAL)
        event.oneof_decl.add(name="event")
        for field_name, number, nested in _ONEOF:
            event.field.add(name=field_name, number=number, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                            type_name=".com.android.internal.FrameTimelineEvent." + nested, oneof_index=0)
        proto.extension.add(name="frame_timeline_event", number=76, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                            type_name=".com.android.internal.FrameTimelineEvent", extendee=".perfetto.protos.TracePacket")
        message_factory.GetMessages([proto], pool=pool)
        file = pool.FindFileByName(name)
    return file.extensions_by_name["frame_timeline_event"]


FRAME_TIMELINE_EVENT = _declare()

# JankType bits, PresentType, PredictionType, JankSeverityType (the proto's enums).
JANK_NONE, JANK_SF_SCHEDULING, JANK_PREDICTION_ERROR, JANK_DISPLAY_HAL = 1, 2, 4, 8
JANK_SF_CPU, JANK_SF_GPU, JANK_APP, JANK_BUFFER_STUFFING, JANK_UNKNOWN = 16, 32, 64, 128, 256
JANK_SF_STUFFING, JANK_DROPPED = 512, 1024
PRESENT_ON_TIME, PRESENT_LATE, PRESENT_EARLY, PRESENT_DROPPED = 1, 2, 3, 4
PREDICTION_VALID, PREDICTION_EXPIRED = 1, 2
SEVERITY_NONE, SEVERITY_PARTIAL, SEVERITY_FULL = 1, 2, 3
PRESENT_THRESHOLD_NS = 2_000_000      # JankClassificationThresholds: present 2 ms, deadline 0
DEADLINE_THRESHOLD_NS = 0
PREDICTION_EXPIRED_START_DELTA_NS = 2_000_000
JANK_NAMES = [(JANK_SF_SCHEDULING, "SurfaceFlinger Scheduling"), (JANK_PREDICTION_ERROR, "Prediction Error"),
              (JANK_DISPLAY_HAL, "Display HAL"), (JANK_SF_CPU, "SurfaceFlinger CPU Deadline Missed"),
              (JANK_SF_GPU, "SurfaceFlinger GPU Deadline Missed"), (JANK_APP, "App Deadline Missed"),
              (JANK_BUFFER_STUFFING, "Buffer Stuffing"), (JANK_UNKNOWN, "Unknown Jank"),
              (JANK_SF_STUFFING, "SurfaceFlinger Stuffing"), (JANK_DROPPED, "Dropped Frame")]

APP_PID, SF_PID, OTHER_PID = 4242, 600, 5151
LAYER = "TX - com.example.feed/com.example.feed.MainActivity#0"
T0 = 2_000_000_000


def matches_cadence(delay, period):
    """FrameTimeline's delayMatchVsyncCadence: a delay within the present threshold of a whole period."""
    if delay > 100_000_000:
        return True
    jitter = abs(delay) % period
    return jitter < PRESENT_THRESHOLD_NS or jitter >= period - PRESENT_THRESHOLD_NS


class App:
    """One app layer's frames: each frame's token aims at a vsync; its main thread and RenderThread
    (cpu) run one after the other from its wake-up, its GPU work after them (gpu). The next frame's
    wake-up is the first one at or after the previous frame's cpu work ended (Choreographer skips
    the vsyncs it missed); a frame's GPU work does not hold the next frame back."""

    def __init__(self, sim):
        self.sim = sim
        self.frames = []
        self.next_vsync = 0

    def frame(self, cpu_periods=0.5, gpu_periods=0.1, start_late_periods=0.0, expired=False, replace_next=False,
              idle_before=0):
        sim = self.sim
        k = self.next_vsync + idle_before
        expected_present = sim.vsync(k)
        wake = expected_present - sim.sf_ns - sim.app_ns
        deadline = expected_present - sim.sf_ns
        start = wake + int(start_late_periods * sim.period)
        cpu_end = start + int(cpu_periods * sim.period)
        ready = cpu_end + int(gpu_periods * sim.period)
        token = sim.token()
        f = dict(token=token, k=k, expectedPresentNs=expected_present, wakeNs=wake, deadlineNs=deadline, startNs=start,
                 handOverNs=ready, expired=expired, replaceNext=replace_next, shown=None, dropped=False, latch=None,
                 displayToken=None)
        self.frames.append(f)
        # The next wake-up: the first at or after this frame's cpu work ends.
        n = k + 1
        while sim.vsync(n) - sim.sf_ns - sim.app_ns < cpu_end:
            n += 1
        self.next_vsync = n
        return f

    def on_time(self, count, **k):
        for _ in range(count):
            self.frame(**k)


class Sim:
    def __init__(self, name, rate_hz, app_ms, sf_ms, present_delay, compress, shuffle_sequences,
                 sf_expired_displays=(), seed=1):
        self.name = name
        self.rate_hz = rate_hz
        self.period = round(1e9 / rate_hz)
        self.app_ns = int(app_ms * 1e6)
        self.sf_ns = int(sf_ms * 1e6)
        self.present_delay = present_delay
        self.compress = compress
        self.shuffle_sequences = shuffle_sequences
        self.sf_expired_displays = set(sf_expired_displays)
        self.next_token = 1000
        self.next_cookie = 1
        self.app = App(self)
        # Display-side plans by vsync index: 'sf_cpu', 'sf_gpu' (composition ends a period late),
        # 'hal' (SurfaceFlinger on time, the fence a vsync late), ('drift', fraction) (the fence off
        # the predicted vsync by a fraction of a period: a prediction error).
        self.display_plan = {}
        self.truncate_last_surface = False

    def vsync(self, k):
        return T0 + k * self.period

    def token(self):
        self.next_token += 1
        return self.next_token

    def cookie(self):
        self.next_cookie += 1
        return self.next_cookie

    # --- the display: latch, compose, present -------------------------------------------------------

    def run(self):
        frames = self.app.frames
        last_k = max(f["k"] for f in frames) + 12
        queue = []              # frames ready or not, in submission order, not yet latched or dropped
        pending = list(frames)  # frames not yet submitted
        displays = []
        busy_until = -1         # the vsync index SurfaceFlinger composes next (after a late one)
        previous_actual_present = 0
        previous_latch = {}     # the layer's last latch: (latch time, expected present of that display frame)
        k = 0
        while k <= last_k:
            if k < busy_until:
                k += 1
                continue
            present_expected = self.vsync(k)
            wake = present_expected - self.sf_ns
            while pending and pending[0]["startNs"] <= wake:
                queue.append(pending.pop(0))
            plan = self.display_plan.get(k)
            latched, dropped = [], []
            # One buffer per display frame: the oldest queued one whose hand-over came by the latch
            # and whose expected present has come (a buffer is not shown early). A frame marked to be
            # replaced is dropped when the one after it is latchable at the same latch.
            ready = [f for f in queue if f["handOverNs"] <= wake and f["expectedPresentNs"] <= present_expected]
            if ready:
                head = ready[0]
                if head["replaceNext"] and len(ready) > 1:
                    dropped.append(head)
                    head = ready[1]
                latched.append(head)
            if not latched and not dropped:
                k += 1
                continue
            for f in latched + dropped:
                queue.remove(f)
            token = self.token()
            sf_end = wake + int(self.sf_ns * 0.6)
            gpu_composition = plan == "sf_gpu"
            present = present_expected
            if plan in ("sf_cpu", "sf_gpu"):
                sf_end = present_expected + self.period // 3
                present = self.vsync(k + 1)
                busy_until = k + 2
            elif plan == "hal":
                present = self.vsync(k + 1)
                busy_until = k + 2
            elif isinstance(plan, tuple) and plan[0] == "drift":
                present = present_expected + int(plan[1] * self.period)
            present_k = k + 1 if plan in ("sf_cpu", "sf_gpu", "hal") else k
            d = dict(token=token, k=k, presentK=present_k, wakeNs=wake, expectedPresentNs=present_expected, presentNs=present,
                     sfEndNs=sf_end, gpuComposition=gpu_composition, latched=latched, dropped=dropped,
                     predictionValid=k not in self.sf_expired_displays)
            self.classify_display(d, previous_actual_present)
            for f in dropped:
                f["dropped"] = True
                f["dropNs"] = wake
                f["displayToken"] = token
            for f in latched:
                f["shown"] = present
                f["shownK"] = d["presentK"]
                f["latch"] = wake
                f["displayToken"] = token
                f["latchedBy"] = d
                self.classify_surface(f, d, previous_latch.get("layer"))
                previous_latch["layer"] = (wake, present_expected)
            previous_actual_present = present
            displays.append(d)
            k += 1
        self.displays = displays

    def classify_display(self, d, previous_actual_present):
        delay = d["presentNs"] - d["expectedPresentNs"]
        late_finish = d["sfEndNs"] > d["expectedPresentNs"]
        jank = JANK_NONE
        if abs(delay) > PRESENT_THRESHOLD_NS:
            present_type = PRESENT_LATE if delay > 0 else PRESENT_EARLY
            if delay > 0:
                stuffing = abs(d["expectedPresentNs"] - previous_actual_present) <= PRESENT_THRESHOLD_NS \
                    or previous_actual_present > d["expectedPresentNs"]
                jank = JANK_SF_STUFFING if stuffing else JANK_NONE
                if not late_finish and not stuffing:
                    jank = JANK_DISPLAY_HAL if matches_cadence(delay, self.period) else JANK_PREDICTION_ERROR
                elif late_finish and (not stuffing or d["presentNs"] - previous_actual_present > self.period + PRESENT_THRESHOLD_NS):
                    jank = JANK_SF_GPU if d["gpuComposition"] else JANK_SF_CPU
            else:
                jank = JANK_SF_SCHEDULING if matches_cadence(delay, self.period) or late_finish else JANK_PREDICTION_ERROR
        else:
            present_type = PRESENT_ON_TIME
        if not d["predictionValid"]:
            jank = JANK_UNKNOWN   # no classification without SurfaceFlinger's own prediction
        d["presentType"], d["jankType"], d["onTimeFinish"] = present_type, jank, not late_finish

    def classify_surface(self, f, d, previous):
        """SurfaceFrame's legacy classification once its display frame is presented."""
        if f["expired"]:
            f["presentType"], f["jankType"], f["onTimeFinish"], f["severity"] = PRESENT_LATE, JANK_APP, False, 0
            f["presentDelayNs"] = 0
            return
        delay = f["shown"] - f["expectedPresentNs"]
        f["presentDelayNs"] = delay
        late_finish = f["handOverNs"] - f["deadlineNs"] > DEADLINE_THRESHOLD_NS
        if abs(delay) > PRESENT_THRESHOLD_NS:
            present_type = PRESENT_LATE if delay > 0 else PRESENT_EARLY
        else:
            present_type = PRESENT_ON_TIME
        display_jank = d["jankType"]
        jank = JANK_NONE
        if present_type == PRESENT_EARLY:
            jank = (JANK_SF_SCHEDULING if matches_cadence(delay, self.period) else JANK_PREDICTION_ERROR) \
                if not late_finish else JANK_UNKNOWN
        elif present_type == PRESENT_LATE:
            jank = 0
            if previous is not None:
                last_latch, last_expected_present = previous
                if f["deadlineNs"] <= last_latch and f["expectedPresentNs"] - PRESENT_THRESHOLD_NS < last_expected_present:
                    jank |= JANK_BUFFER_STUFFING
                    late_finish = not (last_latch + self.period > f["handOverNs"])
            if not late_finish:
                if display_jank != JANK_NONE:
                    jank |= display_jank
                elif not jank & JANK_BUFFER_STUFFING:
                    jank |= JANK_SF_SCHEDULING if matches_cadence(delay, self.period) else JANK_PREDICTION_ERROR
            else:
                jank |= JANK_APP
                if display_jank != JANK_NONE:
                    jank |= display_jank
            if jank == 0:
                jank = JANK_NONE
        # Severity: none without a jank of the frame's own or the display's; else partial when the
        # frame missed by less than a period, full from a period on.
        janky_bits = JANK_DISPLAY_HAL | JANK_SF_CPU | JANK_SF_GPU | JANK_APP | JANK_PREDICTION_ERROR | JANK_SF_SCHEDULING | JANK_UNKNOWN
        severity = SEVERITY_NONE if jank == JANK_NONE or not jank & janky_bits else \
            (SEVERITY_PARTIAL if abs(delay) < self.period else SEVERITY_FULL)
        f["presentType"], f["jankType"], f["onTimeFinish"], f["severity"] = present_type, jank, not late_finish, severity

    # --- truth ------------------------------------------------------------------------------------

    @staticmethod
    def tag(jank, present_type):
        """trace_processor's surface frame jank tag."""
        self_bits = JANK_APP | JANK_UNKNOWN
        display_bits = JANK_SF_SCHEDULING | JANK_PREDICTION_ERROR | JANK_DISPLAY_HAL | JANK_SF_CPU | JANK_SF_GPU
        if jank == 0:
            return "Unspecified"
        if jank != JANK_NONE and jank & self_bits:
            return "Self Jank"
        if jank != JANK_NONE and jank & display_bits:
            return "Other Jank"
        if jank == JANK_BUFFER_STUFFING:
            return "Buffer Stuffing"
        if jank == JANK_SF_STUFFING:
            return "SurfaceFlinger Stuffing"
        if present_type == PRESENT_DROPPED:
            return "Dropped Frame"
        return "No Jank"

    def truth(self, traced):
        frames = [f for f in self.app.frames if f["shown"] is not None or f["dropped"]]
        shown = sorted((f for f in frames if f["shown"] is not None), key=lambda f: f["shown"])
        # The display's view: each vsync without a new frame of the app while one was due.
        # Presents are taken on the vsync they signalled at (a prediction error lands a little off it).
        missed = {}
        dropped_refreshes = 0
        shown_ks = {f["shownK"] for f in shown}
        for k in range(shown[0]["shownK"], shown[-1]["shownK"] + 1):
            t = self.vsync(k)
            if k in shown_ks:
                continue
            due = [f for f in frames if f["expectedPresentNs"] <= t and (f["shown"] is None or f["shownK"] > k)
                   and not (f["dropped"] and f["dropNs"] < t - self.period)]
            if not due:
                continue
            owner = min(due, key=lambda f: f["expectedPresentNs"])
            if owner["dropped"]:
                dropped_refreshes += 1
            else:
                missed[owner["token"]] = missed.get(owner["token"], 0) + 1
        out = []
        judged = []
        for f in self.app.frames:
            if f["shown"] is None and not f["dropped"]:
                continue
            in_flight = f is traced.get("inFlight")
            row = dict(token=f["token"], expectedPresentNs=f["expectedPresentNs"], handOverNs=f["handOverNs"],
                       deadlineNs=f["deadlineNs"], expired=f["expired"], dropped=f["dropped"], inFlight=in_flight)
            if f["dropped"]:
                row.update(jankType=JANK_DROPPED, presentType=PRESENT_DROPPED, tag="Dropped Frame", judged=False)
                out.append(row)
                continue
            hitch = missed.get(f["token"], 0) * self.period
            lateness = self.vsync(f["shownK"]) - f["expectedPresentNs"]
            tag = self.tag(f["jankType"], f["presentType"])
            row.update(presentNs=f["shown"], hitchNs=hitch, latencyNs=max(0, lateness - hitch),
                       kind=("commit" if f["handOverNs"] > f["deadlineNs"] or f["expired"] else "render") if hitch > 0 else ("latency" if lateness > 0 else "none"),
                       jankType=f["jankType"], jankNames=[n for b, n in JANK_NAMES if f["jankType"] & b and f["jankType"] != JANK_NONE],
                       presentType=f["presentType"], severity=f["severity"], layer=LAYER, gpuComposition=f["latchedBy"]["gpuComposition"],
                       tag=tag, platformJanky=tag in ("Self Jank", "Other Jank"),
                       blame={"Self Jank": "app", "Other Jank": "compositor"}.get(tag),
                       judged=not in_flight)
            out.append(row)
            if row["judged"]:
                judged.append(row)
        hitches = [r for r in judged if r["hitchNs"] > 0]
        start = min(f["wakeNs"] if not f["expired"] else f["handOverNs"] - PREDICTION_EXPIRED_START_DELTA_NS
                    for f in self.app.frames if any(r["token"] == f["token"] for r in judged))
        end = max(r["presentNs"] for r in judged)
        total = sum(r["hitchNs"] for r in hitches)
        agreement = dict(frames=len(judged),
                         bothJanky=sum(1 for r in judged if r["platformJanky"] and r["hitchNs"] > 0),
                         platformOnly=sum(1 for r in judged if r["platformJanky"] and r["hitchNs"] == 0),
                         hitchOnly=sum(1 for r in judged if not r["platformJanky"] and r["hitchNs"] > 0),
                         bothOnTime=sum(1 for r in judged if not r["platformJanky"] and r["hitchNs"] == 0))
        return dict(name=self.name, rateHz=self.rate_hz, periodNs=self.period, sfDurationNs=self.sf_ns, appDurationNs=self.app_ns,
                    presentDelayWritten=self.present_delay, compressed=self.compress, sequencesOutOfOrder=self.shuffle_sequences,
                    framesJudged=len(judged), hitchCount=len(hitches), totalHitchNs=total,
                    longestHitchNs=max([r["hitchNs"] for r in hitches] or [0]),
                    animatingNs=end - start, hitchTimeRatioMsPerS=(total / 1e6) / ((end - start) / 1e9),
                    commitHitchCount=sum(1 for r in hitches if r["kind"] == "commit"),
                    renderHitchCount=sum(1 for r in hitches if r["kind"] == "render"),
                    appBlamedHitchNs=sum(r["hitchNs"] for r in hitches if r["blame"] == "app"),
                    compositorBlamedHitchNs=sum(r["hitchNs"] for r in hitches if r["blame"] == "compositor"),
                    droppedFrames=sum(1 for r in out if r["dropped"]), droppedRefreshes=dropped_refreshes,
                    inFlightFrames=sum(1 for r in out if r["inFlight"]), expiredFrames=sum(1 for r in out if r["expired"]),
                    agreement=agreement, frames=out)

    # --- the trace ---------------------------------------------------------------------------------

    def packets(self):
        """(sequence, packet bytes) in the order SurfaceFlinger's FrameTimeline writes them: each
        display frame once its present fence signals, then every surface frame it latched or dropped."""
        emitted = []
        sequences = (3, 4) if self.shuffle_sequences else (3, 3)
        traced = {}
        for index, d in enumerate(self.displays):
            seq = sequences[index % 2]
            packets = []

            def event(ts, kind, **fields):
                p = TracePacket(timestamp=ts, trusted_packet_sequence_id=seq)
                message = getattr(p.Extensions[FRAME_TIMELINE_EVENT], kind)
                for key, value in fields.items():
                    setattr(message, key, value)
                packets.append(p.SerializeToString())

            if d["predictionValid"]:
                c = self.cookie()
                event(d["wakeNs"], "expected_display_frame_start", cookie=c, token=d["token"], pid=SF_PID)
                event(d["expectedPresentNs"], "frame_end", cookie=c)
            c = self.cookie()
            fields = dict(cookie=c, token=d["token"], pid=SF_PID, present_type=d["presentType"], on_time_finish=d["onTimeFinish"],
                          gpu_composition=d["gpuComposition"], jank_type=d["jankType"],
                          prediction_type=PREDICTION_VALID if d["predictionValid"] else PREDICTION_EXPIRED)
            if self.present_delay:
                fields["present_delay_millis"] = (d["presentNs"] - d["expectedPresentNs"]) / 1e6
            event(d["wakeNs"], "actual_display_frame_start", **fields)
            event(d["presentNs"], "frame_end", cookie=c)
            for f in d["latched"] + d["dropped"]:
                if not f["expired"]:
                    c = self.cookie()
                    event(f["wakeNs"], "expected_surface_frame_start", cookie=c, token=f["token"], display_frame_token=d["token"],
                          pid=APP_PID, layer_name=LAYER)
                    event(f["deadlineNs"], "frame_end", cookie=c)
                c = self.cookie()
                end = f["dropNs"] if f["dropped"] else f["handOverNs"]
                start = end - PREDICTION_EXPIRED_START_DELTA_NS if f["expired"] else f["startNs"]
                fields = dict(cookie=c, token=f["token"], display_frame_token=d["token"], pid=APP_PID, layer_name=LAYER,
                              present_type=PRESENT_DROPPED if f["dropped"] else f["presentType"],
                              on_time_finish=False if f["dropped"] else f["onTimeFinish"],
                              gpu_composition=d["gpuComposition"], jank_type=JANK_DROPPED if f["dropped"] else f["jankType"],
                              prediction_type=PREDICTION_EXPIRED if f["expired"] else PREDICTION_VALID, is_buffer=True)
                if not f["dropped"]:
                    fields["jank_severity_type"] = f["severity"]
                if self.present_delay and not f["dropped"]:
                    fields["present_delay_millis"] = f["presentDelayNs"] / 1e6
                event(start, "actual_surface_frame_start", **fields)
                last = index == len(self.displays) - 1 and f is (d["latched"] + d["dropped"])[-1]
                if last and self.truncate_last_surface and not f["dropped"]:
                    traced["inFlight"] = f   # the trace stopped before this frame's end was written
                    continue
                event(end, "frame_end", cookie=c)
            emitted.append((seq, packets))
        return emitted, traced

    def write(self, out_dir):
        self.run()
        emitted, traced = self.packets()
        tree = TracePacket(timestamp=T0 - 10_000_000, trusted_packet_sequence_id=1)
        for pid, name in ((APP_PID, "com.example.feed"), (SF_PID, "/system/bin/surfaceflinger")):
            process = tree.process_tree.processes.add()
            process.pid, process.ppid = pid, 1
            process.cmdline.append(name)
        chunks = [[tree.SerializeToString()]]
        if self.shuffle_sequences:
            # Perfetto keeps each sequence's packets in order; chunks of different sequences reach
            # the file in the order they were committed: here each sequence's chunk of two display
            # frames, the odd sequence's committed first.
            seq3 = [p for seq, ps in emitted if seq == 3 for p in [ps]]
            seq4 = [p for seq, ps in emitted if seq == 4 for p in [ps]]
            for i in range(0, max(len(seq3), len(seq4)), 2):
                chunks.append([p for ps in seq4[i:i + 2] for p in ps])
                chunks.append([p for ps in seq3[i:i + 2] for p in ps])
        else:
            chunks.append([p for _, ps in emitted for p in ps])
        trace = Trace()
        if self.compress:
            # compressed_packets: zlib of a Trace holding a batch of packets, as traced compresses them.
            trace.packet.add().ParseFromString(chunks[0][0])
            flat = [p for chunk in chunks[1:] for p in chunk]
            for i in range(0, len(flat), 40):
                batch = Trace()
                for raw in flat[i:i + 40]:
                    batch.packet.add().ParseFromString(raw)
                trace.packet.add(trusted_packet_sequence_id=3).compressed_packets = zlib.compress(batch.SerializeToString())
        else:
            for chunk in chunks:
                for raw in chunk:
                    trace.packet.add().ParseFromString(raw)
        path = os.path.join(out_dir, self.name + ".pftrace")
        with open(path, "wb") as f:
            f.write(trace.SerializeToString())
        truth = self.truth(traced)
        with open(os.path.join(out_dir, self.name + ".truth.json"), "w") as f:
            json.dump(truth, f, indent=1, sort_keys=True)
        return truth


def scenario(sim, prediction_error=True):
    """The same story at every rate: steady frames, the app late by 1, 2 and 3 periods on its main
    thread, late on its GPU (the frames after it stuffed in the queue until the app skips a vsync),
    SurfaceFlinger late on the CPU and on the GPU, the display HAL late, a present off the predicted
    vsync (a prediction error), a frame dropped for the one after it, a prediction expired after a
    long stall, and a frame in flight when the trace stops."""
    app, p = sim.app, sim.period
    budget = sim.app_ns / p            # the app's budget in periods
    app.on_time(20)
    app.frame(cpu_periods=budget + 0.5)          # deadline missed by 1 period
    app.on_time(10)
    app.frame(cpu_periods=budget + 1.5)          # by 2
    app.on_time(10)
    app.frame(cpu_periods=budget + 2.5)          # by 3
    app.on_time(10)
    app.frame(cpu_periods=0.4, gpu_periods=budget + 0.5 - 0.4)   # GPU late by 1: the next frames queue behind it
    app.on_time(5)
    app.frame(idle_before=1)                     # the app skips a vsync: the queue drains
    app.on_time(10)
    for plan in ("sf_cpu", "sf_gpu", "hal"):
        app.on_time(1)
        sim.display_plan[app.next_vsync] = plan
        app.on_time(3)
        app.frame(idle_before=1)
        app.on_time(10)
    if prediction_error:
        app.on_time(1)
        sim.display_plan[app.next_vsync] = ("drift", 0.2)
        app.on_time(10)
    app.frame(cpu_periods=0.3, gpu_periods=budget + 0.2 - 0.3, replace_next=True)   # dropped for the next one
    app.frame(cpu_periods=0.3, gpu_periods=0.1)
    app.on_time(10)
    app.frame(cpu_periods=budget + 9.6, expired=True)   # a long stall: the token's predictions expired
    app.on_time(20)
    sim.truncate_last_surface = True


def drifting_scenario(sim):
    """Frames shown within a quarter period of their vsync, every eighth one off the predicted vsync
    by a fifth of a period: SurfaceFlinger calls those janky (Prediction Error), the display showed
    each on its vsync. Hitch and the platform disagree on one frame in eight."""
    for i in range(120):
        if i % 8 == 4:
            sim.display_plan[sim.app.next_vsync] = ("drift", 0.2)
        sim.app.frame()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make-frametimeline-truth.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    sims = [
        # 60 Hz: no present delay (older builds), SurfaceFlinger's duration 12.5 ms (not a period).
        Sim("frametimeline-60hz", 60, app_ms=20.5, sf_ms=12.5, present_delay=False, compress=False, shuffle_sequences=False),
        # 90 Hz: present delay written; FrameTimeline on two sequences committed out of order.
        Sim("frametimeline-90hz", 90, app_ms=20.5, sf_ms=10.5, present_delay=True, compress=False, shuffle_sequences=True),
        # 120 Hz: present delay written, compressed packets, out-of-order sequences, and display
        # frames whose SurfaceFlinger prediction expired (no expected display timeline: only the
        # present delay gives the expected present of the frames they latched).
        Sim("frametimeline-120hz", 120, app_ms=16.6, sf_ms=11.0, present_delay=True, compress=True, shuffle_sequences=True,
            sf_expired_displays=(30, 31, 95)),
    ]
    # 90 Hz, one frame in eight presented off its predicted vsync: more than 5 % disagreement.
    drifting = Sim("frametimeline-drift-90hz", 90, app_ms=20.5, sf_ms=10.5, present_delay=True, compress=False, shuffle_sequences=False)
    summary = []
    for sim in sims + [drifting]:
        if sim is drifting:
            drifting_scenario(sim)
        else:
            scenario(sim, prediction_error=sim.rate_hz != 120)
        truth = sim.write(out)
        summary.append((truth["name"], truth["framesJudged"], truth["hitchCount"], round(truth["totalHitchNs"] / 1e6, 3)))
    for row in summary:
        print("%s: %d frames judged, %d hitches, %.3f ms" % row)


if __name__ == "__main__":
    main()
