#if canImport(Glibc)
import Glibc
#endif
import CHitchSupport
import HitchAnalysis

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

/// One line, always: an error message never spans lines, whatever a trace put in it. With
/// `--format json` the line is JSON, `{"error":"…"}`, so a script reading the JSON output reads
/// the failure the same way.
func writeError(_ message: String) {
    let line = message.split(whereSeparator: \.isNewline).joined(separator: " ")
    if errorsAreJSON, let json = try? JSONOutput.encoder(pretty: false).encode(["error": line]) {
        writeStandardError(String(decoding: json, as: UTF8.self) + "\n")
    } else {
        writeStandardError("hitch: error: " + line + "\n")
    }
}

/// True when the command line asks for JSON output (`--format json` or `--format=json`).
let errorsAreJSON: Bool = {
    let words = CommandLine.arguments
    return words.contains("--format=json") || zip(words, words.dropFirst()).contains { $0 == "--format" && $1 == "json" }
}()

/// One warning line on stderr (the command goes on).
func writeWarning(_ message: String) {
    writeStandardError("hitch: warning: " + message.split(whereSeparator: \.isNewline).joined(separator: " ") + "\n")
}

/// True when stderr is a terminal (progress bars draw only then).
var standardErrorIsTerminal: Bool { isatty(2) != 0 }

/// Flushes what `print` buffered; a write error anywhere in it (a full disk, a closed pipe) is
/// reported, so no command exits 0 after losing its output.
func flushStandardOutput() throws {
    if hitch_flush_standard_output_failed() != 0 {
        throw CLIError("cannot write standard output: \(String(cString: strerror(errno)))")
    }
}
