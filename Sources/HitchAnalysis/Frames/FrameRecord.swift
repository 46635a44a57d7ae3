import HitchTrace

// Frames and hitches (Apple's definitions; docs/METRICS.md "Frames and hitches").
//
// A frame's events (begin on the main thread, commit, render end, present on the render thread)
// arrive in file order, which is per-thread order only, so frames are assembled by id and judged
// in the order they began once final (see `FrameAssembler`).

/// A frame's recorded lifecycle, assembled from its events.
struct FrameRecord: Sendable {
    var frameID: UInt64
    var beganNs: Int64 = .min       // the frame-began event's time (main thread starts work)
    var vsyncNs: Int64 = 0
    var targetNs: Int64 = 0
    var periodNs: Int64 = 0
    /// When the frame was due on screen, where the trace states it (`FrameBegan.expectedPresentNs`);
    /// .min: one period after `targetNs`.
    var statedExpectedPresentNs: Int64 = .min
    var commitNs: Int64 = .min
    var renderEndNs: Int64 = .min
    var presentNs: Int64 = .min
    /// The earliest input that arrived since the previous frame began (release time in the replay).
    var inputArrivalNs: Int64 = .min
    /// The main and render threads' scheduler counters at the frame's phases (FrameReadings.swift),
    /// boxed: most of a record's size, copied with every record, and absent from most traces.
    private var readingsBox: FrameReadingsBox? = nil

    init(frameID: UInt64) { self.frameID = frameID }

    var hasBegan: Bool { beganNs != .min }
    var hasCommit: Bool { commitNs != .min }
    /// Whether `judgeRecorded` can judge the frame: it began, committed and has a period.
    var isJudgeable: Bool { hasBegan && hasCommit && periodNs > 0 }

    /// Whether any reading was recorded (without one, `readings` is all absent: callers skip it).
    var hasReadings: Bool { readingsBox != nil }

    /// The readings (none recorded: all absent). Changed in place, the box copied first when shared.
    var readings: FrameReadings {
        get { readingsBox?.readings ?? FrameReadings.none }
        _modify {
            if readingsBox == nil {
                readingsBox = FrameReadingsBox(FrameReadings.none)
            } else if !isKnownUniquelyReferenced(&readingsBox) {
                readingsBox = FrameReadingsBox(readingsBox.unsafelyUnwrapped.readings)
            }
            yield &readingsBox.unsafelyUnwrapped.readings
        }
    }
}

/// A frame's readings on the heap (`FrameRecord.readings`). `@unchecked Sendable`: it is only
/// changed through `FrameRecord.readings`, which copies it first unless the record holds the only reference.
final class FrameReadingsBox: @unchecked Sendable {
    var readings: FrameReadings
    init(_ readings: FrameReadings) { self.readings = readings }
}
