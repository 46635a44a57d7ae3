import HitchTrace

// What is published for hitch attribution (`PassContext`): finished stage instances, body
// evaluations and main-thread samples.

/// A finished stage instance, published for hitch attribution.
struct StageInstance: Sendable {
    var name: Int32          // NameTable index
    var thread: UInt32
    var startNs: Int64
    var endNs: Int64
    var selfNs: Int64
}

/// A finished body evaluation, kept briefly for hitch attribution.
struct BodyInstance: Sendable {
    var viewType: Int32
    var thread: UInt32
    var startNs: Int64
    var endNs: Int64
}

/// A main-thread sample, kept briefly for hitch attribution.
struct SampleInstance: Sendable {
    var atNs: Int64
    var stack: UInt32
}
