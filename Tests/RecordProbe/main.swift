// A child process for the recorder's exit and crash tests (TraceExitTests): records numbered
// events, then ends in the way the test asks. Built by `swift build` next to the test bundle.
//
//   hitch-record-probe exit PATH        record on two threads, then exit(0) without stop()
//   hitch-record-probe quiet PATH       record, print "recorded", then wait (the test SIGKILLs it)
//   hitch-record-probe signal PATH SIG  record, print "recorded", then wait (the test sends SIG;
//                                       SEGV and ABRT are raised by the probe itself)
//   hitch-record-probe frames PATH END  record 120 Hz frames on the main thread for 2 s (print
//                                       "recorded" after the tenth), then end as END says: stop
//                                       (stop()), exit (exit(0) without stop()), or forever (keep
//                                       recording frames until killed)
import Foundation
import HitchTrace

let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    FileHandle.standardError.write("usage: hitch-record-probe exit|quiet|signal|frames PATH [SIGNAL|END]\n".data(using: .utf8)!)
    exit(2)
}
let mode = arguments[1], path = arguments[2]
// Foundation's Process hands the child the signal mask of the thread that spawned it (a test
// worker thread blocks most signals); a real app starts with none blocked, so start like one.
var noSignals = sigset_t()
sigemptyset(&noSignals)
sigprocmask(SIG_SETMASK, &noSignals, nil)
enum Probe {
    /// Events each of the two recording threads records.
    static let eventsPerThread = 1000

    static func say(_ line: String) {
        _ = (line + "\n").withCString { write(1, $0, strlen($0)) }
    }

    static func recordNumbered(_ name: TraceName, spacingMicroseconds: UInt32) {
        for index in 0..<eventsPerThread {
            Trace.instant(name, category: "probe", with: .int("seq", index))
            if spacingMicroseconds > 0 { usleep(spacingMicroseconds) }
        }
    }

    /// A second thread records beside the main thread and stays alive (its buffer stays active).
    static func recordOnAnotherThread(spacingMicroseconds: UInt32) {
        let done = DispatchSemaphore(value: 0)
        Thread {
            recordNumbered("other", spacingMicroseconds: spacingMicroseconds)
            done.signal()
            while true { pause() }
        }.start()
        done.wait()
    }
}

do {
    switch mode {
    case "exit":
        // A long flush interval: only the exit hook can have written these events.
        _ = try TraceRecorder.start(path: path, configuration: .init(flushIntervalMs: 60_000))
        Trace.setThreadRole(.main)
        Probe.recordOnAnotherThread(spacingMicroseconds: 20)
        Probe.recordNumbered("main", spacingMicroseconds: 20)
        exit(0)
    case "quiet":
        _ = try TraceRecorder.start(path: path, configuration: .init(flushIntervalMs: 100))
        Probe.recordOnAnotherThread(spacingMicroseconds: 0)
        Probe.recordNumbered("main", spacingMicroseconds: 0)
        Probe.say("recorded")
        while true { pause() }
    case "signal":
        guard arguments.count >= 4 else { exit(2) }
        _ = try TraceRecorder.start(path: path, configuration: .init(flushIntervalMs: 60_000))
        Probe.recordOnAnotherThread(spacingMicroseconds: 0)
        Probe.recordNumbered("main", spacingMicroseconds: 0)
        switch arguments[3] {
        case "SEGV":
            // A real fault: a store through a null pointer.
            let pointer = UnsafeMutablePointer<Int>(bitPattern: Int.random(in: 0...0) + 8)!
            pointer.pointee = 1
        case "ABRT":
            abort()
        default:
            Probe.say("recorded")
            while true { pause() }
        }
    case "frames":
        let end = arguments.count >= 4 ? arguments[3] : "stop"
        let recorder = try TraceRecorder.start(path: path)
        Trace.setThreadRole(.main)
        let periodNs: Int64 = 8_333_333
        var frameID: UInt64 = 0
        while end == "forever" || frameID < 240 {
            let vsync = Trace.now()
            Trace.frameBegan(frameID: frameID, vsync: vsync, target: vsync.advanced(byNanoseconds: periodNs), periodNs: periodNs)
            Trace.interval("work", category: .stage) { usleep(1000) }
            Trace.frameCommitted(frameID: frameID)
            Trace.framePresented(frameID: frameID, at: vsync.advanced(byNanoseconds: periodNs))
            if frameID == 10 { Probe.say("recorded") }
            let remainingNs = vsync.nanoseconds + periodNs - Trace.now().nanoseconds
            if remainingNs > 0 { usleep(UInt32(remainingNs / 1000)) }
            frameID += 1
        }
        if end == "exit" { exit(0) }
        try recorder.stop()
    default:
        FileHandle.standardError.write("hitch-record-probe: unknown mode \(mode)\n".data(using: .utf8)!)
        exit(2)
    }
} catch {
    FileHandle.standardError.write("hitch-record-probe: \(error)\n".data(using: .utf8)!)
    exit(2)
}
