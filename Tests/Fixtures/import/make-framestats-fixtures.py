#!/usr/bin/env python3
"""Writes the framestats fixtures in Tests/Fixtures/import/ (what `dumpsys gfxinfo PKG framestats`
prints), one per FrameInfo column set from Android 6 to 16, following AOSP's FrameInfo.h names.

Each window animates at 60 Hz (or 120 Hz) with two planted janks: a frame whose GPU work completes
1.5 periods after its vsync (one period late) and one 2.5 periods after (two periods late). An idle
gap of 8 periods follows each, as after a fling, so buffer stuffing clears before the next frame.
The "Janky frames" line is the count those two make per window. Rerun after changing it:

    python3 Tests/Fixtures/import/make-framestats-fixtures.py
"""
import os

A6 = ("Flags,IntendedVsync,Vsync,OldestInputEvent,NewestInputEvent,HandleInputStart,AnimationStart,"
      "PerformTraversalsStart,DrawStart,SyncQueued,SyncStart,IssueDrawCommandsStart,SwapBuffers,FrameCompleted").split(",")
A8 = A6 + ["DequeueBufferDuration", "QueueBufferDuration"]
A10 = A8 + ["GpuCompleted"]
A12 = ("Flags,FrameTimelineVsyncId,IntendedVsync,Vsync,InputEventId,HandleInputStart,AnimationStart,"
       "PerformTraversalsStart,DrawStart,FrameDeadline,FrameStartTime,FrameInterval,SyncQueued,SyncStart,"
       "IssueDrawCommandsStart,SwapBuffers,FrameCompleted,DequeueBufferDuration,QueueBufferDuration,"
       "GpuCompleted,SwapBuffersCompleted,DisplayPresentTime").split(",")
A14 = A12 + ["CommandSubmissionCompleted"]
A16 = A12[:12] + ["WorkloadTarget"] + A12[12:] + ["CommandSubmissionCompleted"]


def frames(period, start, count, planted):
    """Rows as dicts of FrameInfo values; `planted` maps a frame index to its GPU completion in periods."""
    rows = []
    vsync = start
    previous_present = 0
    for i in range(count):
        done_periods = planted.get(i, 0.6)
        v = vsync
        row = {
            "Flags": 0, "FrameTimelineVsyncId": 1000 + i, "IntendedVsync": v, "Vsync": v,
            "OldestInputEvent": 0, "NewestInputEvent": 0, "InputEventId": 0,
            "HandleInputStart": v + period // 100, "AnimationStart": v + period // 50,
            "PerformTraversalsStart": v + period // 16, "DrawStart": v + period // 8,
            "FrameDeadline": v + period, "FrameStartTime": v, "FrameInterval": period, "WorkloadTarget": period,
            "SyncQueued": v + period // 5, "SyncStart": v + period // 5 + 100_000, "IssueDrawCommandsStart": v + period // 4,
        }
        done = v + int(done_periods * period)
        row["SwapBuffers"] = done - period // 10
        row["SwapBuffersCompleted"] = done - period // 16
        row["FrameCompleted"] = done - period // 20
        row["GpuCompleted"] = done
        row["DequeueBufferDuration"] = 200_000
        row["QueueBufferDuration"] = 150_000
        row["CommandSubmissionCompleted"] = done - period // 12
        # The compositor latches at the first vsync at or after the buffer is ready and shows it one
        # period later, never before the frame queued ahead of it.
        latch = v + -(-(done - v) // period) * period
        present = max(latch + period, previous_present + period)
        row["DisplayPresentTime"] = present
        previous_present = present
        rows.append(row)
        vsync += period * (9 if i in planted else 1)
    return rows


def dump(path, columns, windows, presents=True, header_columns=None):
    lines = ["Applications Graphics Acceleration Info:", "Uptime: 5021234 Realtime: 5021234", "",
             "** Graphics info for pid 4242 [com.example.feed] **", ""]
    for name, period, rows, janky in windows:
        lines += [f"Window: {name}", "Stats since: 4000000000ns", f"Total frames rendered: {len(rows)}",
                  f"Janky frames: {janky} ({100.0 * janky / len(rows):.2f}%)", "", "---PROFILEDATA---",
                  ",".join(header_columns or columns) + ","]
        for row in rows:
            values = [row[c] if (c != "DisplayPresentTime" or presents) else 0 for c in columns]
            lines.append(",".join(str(v) for v in values) + ",")
        lines += ["---PROFILEDATA---", ""]
    lines.append("View hierarchy:")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    out = os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    p60, p120 = 16_666_667, 8_333_333
    planted = {10: 1.5, 25: 2.5}
    main60 = frames(p60, 5_000_000_000, 40, planted)
    dump(f"{out}/framestats-android6.txt", A6, [("com.example.feed/.MainActivity", p60, main60, 2)])
    dump(f"{out}/framestats-android8.txt", A8, [("com.example.feed/.MainActivity", p60, main60, 2)])
    dump(f"{out}/framestats-android10.txt", A10, [("com.example.feed/.MainActivity", p60, main60, 2)])
    dump(f"{out}/framestats-android12.txt", A12, [("com.example.feed/.MainActivity", p60, main60, 2)])
    # Builds whose header names FrameInterval before FrameStartTime while rows keep FrameInfo's order,
    # and no frame-metrics listener (DisplayPresentTime 0).
    swapped = [("FrameInterval" if c == "FrameStartTime" else "FrameStartTime" if c == "FrameInterval" else c) for c in A12]
    dump(f"{out}/framestats-android12-swapped.txt", A12, [("com.example.feed/.MainActivity", p60, main60, 2)],
         presents=False, header_columns=swapped)
    # Two windows, the second at 120 Hz, in one dump.
    dialog120 = frames(p120, 9_000_000_000, 40, planted)
    dump(f"{out}/framestats-android14.txt", A14, [("com.example.feed/.MainActivity", p60, main60, 2),
                                                  ("com.example.feed/.DetailDialog", p120, dialog120, 2)])
    dump(f"{out}/framestats-android16.txt", A16, [("com.example.feed/.MainActivity", p120, frames(p120, 5_000_000_000, 40, planted), 2)])


if __name__ == "__main__":
    main()
