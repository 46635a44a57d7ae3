import Foundation

/// The traces of `Tests/Fixtures/import/make-frametimeline-truth.py` (SurfaceFlinger's FrameTimeline
/// simulated from its sources, written with Perfetto's own protos) and their truth files, generated
/// once per test process into a temporary folder. The first run on a machine installs PyPI
/// `perfetto` into .build/perfetto-venv (scripts/support/perfetto-python.sh).
public enum FrameTimelineTraces {
    public struct Failure: Error, CustomStringConvertible { public var description: String }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private static let generated: Result<URL, Failure> = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("frametimeline-truth-\(getpid())")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let result = try ChildProcess.run("/bin/bash", [repository.appendingPathComponent("scripts/support/perfetto-python.sh").path,
                                                             repository.appendingPathComponent("Tests/Fixtures/import/make-frametimeline-truth.py").path,
                                                             directory.path], in: repository.path, timeout: 900)
            guard result.status == 0 else { return .failure(Failure(description: "the FrameTimeline generator exited \(result.status): \(result.stderr.suffix(2000))")) }
            return .success(directory)
        } catch {
            return .failure(Failure(description: "the FrameTimeline generator did not run: \(error)"))
        }
    }()

    /// The folder holding `NAME.pftrace` and `NAME.truth.json` for each trace the generator writes.
    public static func directory() throws -> URL { try generated.get() }

    /// The path of trace `name` (`frametimeline-60hz`, …, `frametimeline-drift-90hz`).
    public static func trace(_ name: String) throws -> String { try directory().appendingPathComponent(name + ".pftrace").path }
}
