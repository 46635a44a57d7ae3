#if canImport(Glibc)
import Glibc
#endif
import CHitchSupport

/// Writes text to standard error unbuffered (diagnostics and progress never mix into stdout data).
func writeStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

/// One line, always: an error message never spans lines, whatever a trace put in it.
func writeError(_ message: String) {
    writeStandardError("hitch: error: " + message.split(whereSeparator: \.isNewline).joined(separator: " ") + "\n")
}

/// True when stderr is a terminal (progress bars draw only then).
var standardErrorIsTerminal: Bool { isatty(2) != 0 }

/// Writes `text` to `path`, or to standard output when `path` is nil. A failed or short write, or a
/// failed close (a full disk), is an error: output is never lost behind exit 0.
func writeOutput(_ text: String, to path: String?) throws {
    let output = try OutputFile(path: path)
    do { try output.write(text) } catch { output.abandon(); throw error }
    try output.close()
}

/// A command's output, written in pieces as it is produced (a 2 GB trace's export never sits in
/// memory whole): a file created at `path`, or standard output. Every write is checked.
final class OutputFile {
    private let path: String?
    private var fd: Int32

    init(path: String?) throws {
        self.path = path
        if let path {
            fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw CLIError("cannot write '\(path)': \(String(cString: strerror(errno)))") }
        } else {
            fflush(nil)   // anything printed before goes first
            fd = STDOUT_FILENO
        }
    }

    private var name: String { path ?? "standard output" }

    func write(_ text: String) throws {
        var text = text
        let failure: String? = text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return written < 0 ? String(cString: strerror(errno)) : "short write" }
                offset += written
            }
            return nil
        }
        if let failure { throw CLIError("cannot write '\(name)': \(failure)") }
    }

    func close() throws {
        guard path != nil, fd >= 0 else { return }
        let result = Glibc.close(fd)
        fd = -1
        if result != 0 { throw CLIError("cannot write '\(name)': \(String(cString: strerror(errno)))") }
    }

    /// After a failure: closes and removes a partly written file, so no half output is left behind.
    func abandon() {
        guard let path, fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
        unlink(path)
    }
}

/// Flushes what `print` buffered; a write error anywhere in it (a full disk, a closed pipe) is
/// reported, so no command exits 0 after losing its output.
func flushStandardOutput() throws {
    if hitch_flush_standard_output_failed() != 0 {
        throw CLIError("cannot write standard output: \(String(cString: strerror(errno)))")
    }
}
