import HitchTrace

// The closed sets of words in the Analysis schema (docs/METRICS.md). Each encodes in JSON as its raw
// value and prints as it, so `"\(figures.source)"` reads as the JSON does; renderers compare cases,
// never string literals.

/// A word of the JSON schema: a case with a string raw value.
public protocol AnalysisWord: RawRepresentable, Codable, Sendable, Hashable, CaseIterable, CustomStringConvertible
where RawValue == String {}

extension AnalysisWord {
    public var description: String { rawValue }
}

/// A hitch time ratio's grade: Apple's test scale uses good, warning, critical; Xcode Organizer's
/// field scale good, fair, poor, critical (`HitchGrading`); `ungraded` when no frame was judged.
public enum HitchGrade: String, AnalysisWord {
    case good, fair, warning, poor, critical, ungraded
}

/// Where hitch figures come from: the recorded frames, or the replay model at another rate.
public enum HitchSource: String, AnalysisWord {
    /// Frames judged at the rate they were recorded at; replayed at another rate; the platform's own
    /// hitches (an import without frames: docs/METRICS.md "Platform hitches").
    case recorded, replay, platform
}

/// What the animating time (the hitch time ratio's denominator) was measured from.
public enum AnimatingTimeSource: String, AnalysisWord {
    /// First frame start to last present.
    case frames
    /// The union of interaction intervals.
    case interactions
    /// Interactions in some runs, frames in others.
    case interactionsAndFrames = "interactions+frames"
}

/// What a judged frame was: on time, a commit or render hitch, or one period of added latency
/// (steady triple buffering).
public enum FrameKind: String, AnalysisWord {
    case none, commit, render, latency
}

/// What an offender is: a stage, a view type, or a sampled function (the innermost symbol).
public enum OffenderKind: String, AnalysisWord {
    case stage, view, function, thread
}

/// What bounds an inference op on the roofline: memory bandwidth or compute (unknown without peaks).
public enum OpBound: String, AnalysisWord {
    case unknown, bandwidth, compute
}

/// Why a hitching frame was late (docs/METRICS.md "Hitch causes"): the app's own on-CPU work, the
/// thread waiting runnable for a CPU, the thread asleep (a lock, I/O, a wait on another thread),
/// the machine taking the CPU away (steal), the platform's compositor or display (an imported
/// frame the platform blames on its own pipeline), or unknown (no thread-state readings).
public enum HitchCause: String, AnalysisWord {
    case appWork, waitingForAppThreads, waitingForCPU, blocked, machineStall, compositor, unknown
}

/// Where a trace's thread states came from: the vocabulary's `SchedSource`, a word of the schema too.
extension SchedSource: AnalysisWord {}

/// A run's end-of-recording marker (metadata `recordingEnded`): `present`; `missing` when the recorder
/// promised one (metadata `endMarker`) and the file has none, so the process died while recording;
/// `notPromised` for traces whose writer makes no such promise (imports, older recorders).
public enum EndMarker: String, AnalysisWord {
    case present, missing, notPromised
}

/// Which tier a stretch of unresponsiveness is in (docs/METRICS.md "Hangs"): a hang (at least the
/// hang threshold, Apple's 250 ms), or brief unresponsiveness (at least the brief threshold, 100 ms).
public enum HangTier: String, AnalysisWord {
    case hang, brief
}

/// What a blocked main thread waited on during a hang, from the watchdog's captures (the system call
/// it was in, its kernel state) and from sampled stacks whose innermost function is a blocking call
/// (`BlockingCalls`): a lock or condition (futex), file I/O (a read, a sync, a page fault), a sleep,
/// or another wait (poll, a socket, a child process).
public enum HangWait: String, AnalysisWord {
    case lock, io, sleep, otherWait
}
