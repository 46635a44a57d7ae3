/// Test suites run in parallel in one process and several record: a second `TraceRecorder.start`
/// fails at once by default, so tests ask it to wait for the other suite's recording to stop.
let testRecordingWait: Double = 300
