import Foundation
import HitchTrace
import Testing
@testable import HitchAnalysis

/// Every cause RecordedCauseTests plants one recording at a time, planted in known frames of a
/// single recording: main-thread work, a lock held by a sleeping helper, a sleep inside the frame,
/// other processes sharing the frame thread's CPU, and one of the app's own threads sharing it
/// (named). The judgement of each frame must come from that frame's own timeline, not from the
/// causes planted around it. The long render with frames queued behind it needs a render thread of
/// its own and stays in `RecordedCauseTests.framesQueuedBehindALongRenderAreJudgedByIt`.
struct OneRecordingCauseTests {
    typealias Plant = RecordedCauseTests.Plant

    @Test func everyCausePlantedInOneRecordingIsJudgedByItsOwnCause() async {
        await #expect(processExitsWith: .success) { try OneRecordingCauseTests.everyCausePlantedInOneRecording() }
    }

    static func everyCausePlantedInOneRecording() throws {
        // The frame thread runs niced to 10 and pinned to one CPU, so the busy processes and the
        // app's busy threads of their plants share its CPU; the other plants do not depend on it.
        let (a, planted) = try RecordedCauseTests.onNicedThreadOnOneCPU { cpu in
            try RecordedCauseTests.recordUndisturbed({ planted in Self.causes.map { (planted[$0.plant] ?? [], $0.cause) } }) {
                try RecordedCauseTests.record("one-recording", perf: true, plants: Self.plants(cpu: cpu), rounds: 3)
            }
        }
        for (plant, cause) in Self.causes { RecordedCauseTests.expectPlanted(a, planted[plant] ?? [], cause) }
        let byProcess = a.hitchAttributions.filter { (planted["process"] ?? []).contains($0.frameID) }.flatMap(\.cpuTakenBy)
        #expect(byProcess.isEmpty, "another process's time named as the app's: \(byProcess)")

        try RecordedCauseTests.expectHogNamed(a, planted["hog"] ?? [])
    }

    /// The plants judged by their cause alone (the hog's judgement depends on whose threads held the CPU).
    static let causes: [(plant: String, cause: HitchCause)] = [("work", .appWork), ("lock", .blocked), ("sleep", .blocked), ("process", .waitingForCPU)]

    /// The five plants, each a different cause of a late frame.
    static func plants(cpu: Int) -> [Plant] {
        let ms = RecordedCauseTests.ms
        let holder = SleepingLockHolder()
        let lockPlant = Plant(name: "lock", prepare: holder.takeLock, work: holder.waitForLock)
        // Two busy processes on the frame thread's CPU (they inherit its affinity), killed after the frame.
        var children: [pid_t] = []
        let processPlant = Plant(name: "process", prepare: {
            children = (0..<2).map { _ in RecordedCauseTests.spawnBusyProcess() }
        }, work: { RecordedCauseTests.spin(cpuNs: 4 * ms) }, finish: {
            for child in children { kill(child, SIGKILL); var status: Int32 = 0; waitpid(child, &status, 0) }
            children = []
        })
        let hogs = AppHogThreads(cpu: cpu)
        let hogPlant = Plant(name: "hog", prepare: hogs.start, work: { RecordedCauseTests.spin(cpuNs: 4 * ms) }, finish: hogs.stop)
        return [
            Plant(name: "work", work: { RecordedCauseTests.spin(cpuNs: RecordedCauseTests.appWorkNs) }),
            lockPlant,
            Plant(name: "sleep", work: { usleep(20_000) }),
            processPlant,
            hogPlant,
        ]
    }
}
