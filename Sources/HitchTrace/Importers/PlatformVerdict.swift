// The platform's own judgement of a frame, carried beside the frame into the trace so the analysis
// can show, frame by frame, where Hitch and the platform agree (docs/IMPORT.md "Platform verdicts").
// It is an instant of category `platform.verdict` on the frame's thread at the frame's start, right
// after the frame's begin (the analysis joins it to the last frame begun on that thread): named
// `janky` or `on time` and the platform's reason (`janky: App Deadline Missed`, `on time: Buffer
// Stuffing`), with arguments
// `frameID` and Apple's hitch duration `hitchNs` where the platform gives one.

public enum PlatformVerdict {
    public static let category = "platform.verdict"
    public static let janky = "janky"
    public static let onTime = "on time"
    public static let frameIDArgument = "frameID"
    public static let hitchNsArgument = "hitchNs"

    /// The verdict instant for frame `frameID`.
    static func emit(into sink: ImportSink, frameID: UInt64, atNs: Int64, thread: ThreadID, janky: Bool,
                     detail: String? = nil, hitchNs: Int64? = nil) {
        var arguments = EventArguments(first: .init(name: sink.string(frameIDArgument), value: .uint(frameID)))
        if let hitchNs { arguments.second = .init(name: sink.string(hitchNsArgument), value: .int(hitchNs)) }
        let label = (janky ? Self.janky : onTime) + (detail.map { ": " + $0 } ?? "")
        sink.emit(TraceEvent(timestampNs: atNs, thread: thread,
                             payload: .instant(category: sink.string(category), name: sink.string(label))),
                  arguments: arguments)
    }
}
