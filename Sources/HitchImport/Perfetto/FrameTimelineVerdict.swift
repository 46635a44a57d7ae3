import HitchTrace

/// SurfaceFlinger's judgement of one app surface frame, as FrameTimeline writes it on the frame's
/// actual timeline (AOSP frame_timeline_event.proto), and the jank tag trace_processor derives from
/// it: the platform verdict the importer keeps beside the frame.
struct FrameTimelineVerdict {
    var presentType: UInt64 = 0
    /// The jank type bits; nil when the build wrote none.
    var jankType: UInt64?
    var predictionType: UInt64 = 0
    var severity: UInt64?
    var gpuComposition = false
    /// `present_delay_millis` (newer builds): the actual present less the predicted one.
    var presentDelayNs: Int64?

    static let presentDropped: UInt64 = 4
    static let predictionExpired: UInt64 = 2
    static let jankNone: UInt64 = 1

    /// The jank type bits in Perfetto's words.
    static let jankNames: [(bit: UInt64, name: String)] = [
        (2, "SurfaceFlinger Scheduling"), (4, "Prediction Error"), (8, "Display HAL"),
        (16, "SurfaceFlinger CPU Deadline Missed"), (32, "SurfaceFlinger GPU Deadline Missed"),
        (64, "App Deadline Missed"), (4096, "App Resynced Jitter"), (128, "Buffer Stuffing"), (256, "Unknown Jank"),
        (512, "SurfaceFlinger Stuffing"), (1024, "Dropped Frame"), (2048, "Non Animating"), (8192, "Display not ON"),
        (16384, "ModeChange in progress"), (32768, "PowerModeChange in progress"),
    ]
    /// Jank the app made: its deadline missed, its vsync resynced, or SurfaceFlinger cannot tell.
    private static let appBits: UInt64 = 64 | 4096 | 256
    /// Jank SurfaceFlinger's side made: its scheduling, its prediction, the display HAL, its CPU or GPU.
    private static let compositorBits: UInt64 = 2 | 4 | 8 | 16 | 32
    private static let notPerceivable: Set<UInt64> = [2048, 8192, 32768]
    private static let presentNames = ["Unspecified Present", "On-time Present", "Late Present", "Early Present", "Dropped Frame", "Unknown Present"]
    private static let severityNames = ["Unknown", "None", "Partial", "Full"]

    /// trace_processor's jank tag of a surface frame.
    enum Tag: String {
        case selfJank = "Self Jank", otherJank = "Other Jank", droppedFrame = "Dropped Frame", bufferStuffing = "Buffer Stuffing"
        case surfaceFlingerStuffing = "SurfaceFlinger Stuffing", notPerceivable = "Non-perceivable Jank", noJank = "No Jank"
        case unspecified = "Unspecified"
    }

    var isDropped: Bool { presentType == Self.presentDropped }
    var predictionExpired: Bool { predictionType == Self.predictionExpired }

    var tag: Tag {
        guard let jank = jankType, jank != 0 else { return .unspecified }
        if jank != Self.jankNone, jank & Self.appBits != 0 { return .selfJank }
        if jank != Self.jankNone, jank & Self.compositorBits != 0 { return .otherJank }
        if jank == 128 { return .bufferStuffing }
        if jank == 512 { return .surfaceFlingerStuffing }
        if isDropped { return .droppedFrame }
        if Self.notPerceivable.contains(jank) { return .notPerceivable }
        return .noJank
    }

    /// The verdict's word: the app's jank, SurfaceFlinger's (or the display's), or none (buffer and
    /// SurfaceFlinger stuffing are latency, not jank); nil when the build judged nothing.
    var word: PlatformVerdict? {
        switch tag {
        case .unspecified: nil
        case .selfJank, .droppedFrame: .janky
        case .otherJank: .jankyElsewhere
        case .bufferStuffing, .surfaceFlingerStuffing, .notPerceivable, .noJank: .onTime
        }
    }

    /// The verdict's text: the jank types, then the tag, present type, severity, GPU composition and
    /// the layer, e.g. `App Deadline Missed (Self Jank; Late Present; severity Full; layer TX - …#0)`.
    func detail(layer: String) -> String {
        let jank = jankType ?? 0
        let names = jank == Self.jankNone ? "None" : Self.jankNames.filter { jank & $0.bit != 0 }.map(\.name).joined(separator: ", ")
        var facts = [tag.rawValue, Self.presentNames[Int(min(presentType, 5))]]
        if let severity { facts.append("severity " + Self.severityNames[Int(min(severity, 3))]) }
        if predictionExpired { facts.append("prediction expired") }
        if gpuComposition { facts.append("GPU composition") }
        if !layer.isEmpty { facts.append("layer " + layer) }
        return (names.isEmpty ? "jank type \(jank)" : names) + " (" + facts.joined(separator: "; ") + ")"
    }
}
