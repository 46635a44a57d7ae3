#if canImport(Glibc)
import Glibc
#endif

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
