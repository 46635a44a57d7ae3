import HitchTrace

/// What a thread does for frames: the windows its work is measured in.
enum FrameThreadRole: UInt8, Sendable {
    case unknown, main, render, other
}

/// Thread roles of one run, by dense thread id (the analyzer classifies; passes read).
struct FrameThreadRoles: Sendable {
    private var roles: [FrameThreadRole] = []

    mutating func removeAll() { roles.removeAll(keepingCapacity: true) }

    @inline(__always)
    subscript(thread: UInt32) -> FrameThreadRole {
        get { Int(thread) < roles.count ? roles[Int(thread)] : .unknown }
        set {
            let raw = Int(thread)
            if raw >= roles.count { roles.append(contentsOf: repeatElement(.unknown, count: raw + 1 - roles.count)) }
            roles[raw] = newValue
        }
    }
}
