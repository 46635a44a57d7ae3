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
    case recorded, replay
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
/// the machine taking the CPU away (steal), or unknown (no thread-state readings).
public enum HitchCause: String, AnalysisWord {
    case appWork, waitingForAppThreads, waitingForCPU, blocked, machineStall, unknown
}

/// Where a trace's thread states came from (metadata `schedSource`): exact context switches from
/// perf_event_open, counters read from procfs at frame phases, an imported Perfetto trace's ftrace
/// scheduling events (docs/IMPORT.md), or nothing.
public enum ThreadStateSource: String, AnalysisWord {
    case perfContextSwitch = "perf-context-switch"
    case procfs
    case ftrace
    case none
}

/// A run's end-of-recording marker (metadata `recordingEnded`): `present`; `missing` when the recorder
/// promised one (metadata `endMarker`) and the file has none, so the process died while recording;
/// `notPromised` for traces whose writer makes no such promise (imports, older recorders).
public enum EndMarker: String, AnalysisWord {
    case present, missing, notPromised
}
