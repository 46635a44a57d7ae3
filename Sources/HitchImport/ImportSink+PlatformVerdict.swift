import HitchReader
import HitchTrace

extension ImportSink {
    /// The platform's verdict on frame `frameID` (`PlatformVerdict`): an instant on the frame's thread
    /// at the frame's start, emitted right after the frame's begin.
    func emitPlatformVerdict(_ verdict: PlatformVerdict, frameID: UInt64, atNs: Int64, thread: ThreadID,
                             detail: String? = nil, hitchNs: Int64? = nil) {
        var arguments = EventArguments(first: .init(name: string(PlatformVerdict.frameIDArgument), value: .uint(frameID)))
        if let hitchNs { arguments.second = .init(name: string(PlatformVerdict.hitchNsArgument), value: .int(hitchNs)) }
        emit(TraceEvent(timestampNs: atNs, thread: thread,
                        payload: .instant(category: string(PlatformVerdict.category), name: string(verdict.label(detail: detail)))),
             arguments: arguments)
    }
}
