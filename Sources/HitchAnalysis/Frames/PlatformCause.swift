import HitchTrace

/// The cause an imported frame's platform verdict names (docs/METRICS.md "Platform verdicts"), the
/// platform's own split of who made a frame late: a hitch the platform blames on its own pipeline
/// (`janky elsewhere`: SurfaceFlinger, the display, the scheduler's prediction; Apple's system
/// hitches) is the compositor's, whatever the app's threads did; one it blames on the app is app
/// work where the trace has no thread states to say more (with them, Hitch's own cause stands).
/// A hitch the platform found on time keeps Hitch's cause. A frame with a verdict counts as one
/// whose cause could be told (`appHitchTimeRatioMsPerS` is given), hitch or not.
enum PlatformCause {
    static func apply(verdict label: String, to judged: inout JudgedFrame) {
        guard let verdict = PlatformVerdict(label: label) else { return }
        judged.hasPlatformVerdict = true
        guard judged.hitchNs > 0 else { return }
        switch verdict {
        case .jankyElsewhere: judged.cause = .compositor
        case .janky where judged.states.main == nil: judged.cause = .appWork
        default: break
        }
    }
}
