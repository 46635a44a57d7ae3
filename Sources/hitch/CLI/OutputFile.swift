#if canImport(Glibc)
import Glibc
#endif

// The one checked writer every command's output goes through. Safe by construction:
// - a file is written to a temporary file in its own directory and renamed over the target only
//   once every byte is written and closed, so a failure never leaves half a file or a destroyed one;
// - on failure only that temporary file is removed, never the path the user named;
// - a device or a pipe (`/dev/null`, `/dev/stdout`, a FIFO) is written in place, never unlinked;
// - "-" (or no path) is standard output;
// - an output path that is one of the command's inputs is refused before anything is read.

/// Writes `text` to `path` ("-" or nil: standard output); see `OutputFile`.
func writeOutput(_ text: String, to path: String?, inputs: [String] = []) throws {
    let output = try OutputFile(path: path, inputs: inputs)
    do { try output.write(text) } catch { output.abandon(); throw error }
    try output.close()
}

/// Writes `text` to standard output through the checked writer (a write that fails is an error,
/// never a silent loss).
func writeStandardOutput(_ text: String) throws { try writeOutput(text, to: nil) }

/// Writes `line` and a newline to standard output (`writeStandardOutput`).
func writeStandardOutputLine(_ line: String) throws { try writeOutput(line + "\n", to: nil) }

/// A command's output, written in pieces as it is produced (a 2 GB trace's export never sits in
/// memory whole). Every write is checked; `close()` commits, `abandon()` discards.
final class OutputFile {
    private enum Target {
        case standardOutput
        /// A device or pipe, written where it is.
        case inPlace(path: String)
        /// A regular file (or a new one), written to `temporary` and renamed over `final`.
        case replace(final: String, temporary: String)
    }

    private let target: Target
    private var fd: Int32
    /// The name the user gave, for messages.
    private let name: String

    /// True when the output is standard output.
    static func isStandardOutput(_ path: String?) -> Bool { path == nil || path == "-" }

    /// A missing folder on the way to `path` is created, by every command alike (so `check --format
    /// junit -o reports/budgets.xml` writes its file as `report -o Reports/new/x.html` does).
    init(path: String?, inputs: [String] = []) throws {
        guard let path, path != "-" else {
            fflush(nil)   // anything printed before goes first
            target = .standardOutput
            fd = STDOUT_FILENO
            name = "standard output"
            return
        }
        name = path
        try OutputFile.refuseInputs(path, inputs)
        if let kind = FileKind(path) {
            switch kind {
            case .directory:
                throw CLIError("cannot write '\(path)': it is a directory; give a file name (e.g. \(path.hasSuffix("/") ? path : path + "/")report.html)")
            case .regular:
                break
            case .other:
                // A device, pipe or socket: written in place, never replaced or removed.
                let opened = open(path, O_WRONLY | O_CLOEXEC)
                guard opened >= 0 else { throw CLIError("cannot write '\(path)': \(OutputFile.reason(errno))") }
                target = .inPlace(path: path)
                fd = opened
                return
            }
        }
        // Beside the real file (through a symlink), so the rename replaces its content, not the link.
        let final = OutputFile.resolvedPath(path)
        let directory = OutputFile.directory(of: final)
        try OutputFile.makeDirectories(directory, for: path)
        var template = Array((directory + "/." + OutputFile.baseName(final) + ".hitch-XXXXXX").utf8CString)
        let opened = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard opened >= 0 else {
            let code = errno
            var directoryStatus = stat()
            let problem = stat(directory, &directoryStatus) != 0 ? "the directory '\(directory)' does not exist"
                : "cannot create a file in '\(directory)' (\(OutputFile.reason(code)))"
            throw CLIError("cannot write '\(path)': \(problem); choose a writable location")
        }
        // mkstemp makes the file 0600; give it the mode the replaced file had, or the usual 0666 & ~umask.
        let mode: mode_t
        var status = stat()
        if stat(final, &status) == 0 { mode = status.st_mode & 0o7777 } else {
            let mask = umask(0); umask(mask)
            mode = 0o666 & ~mask
        }
        fchmod(opened, mode)
        _ = fcntl(opened, F_SETFD, FD_CLOEXEC)   // a recording's child process never inherits it
        target = .replace(final: final, temporary: String(cString: template.map { CChar(bitPattern: UInt8(bitPattern: $0)) }))
        fd = opened
    }

    /// Where a writer that needs a path (the FXT writer) should write: the temporary file.
    var stagingPath: String? {
        switch target {
        case .replace(_, let temporary): temporary
        case .inPlace(let path): path
        case .standardOutput: nil
        }
    }

    func write(_ text: String) throws {
        var text = text
        let failure: String? = text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return written < 0 ? OutputFile.reason(errno) : "short write" }
                offset += written
            }
            return nil
        }
        if let failure { throw CLIError("cannot write '\(name)': \(failure)") }
    }

    /// Finishes the output: closes it and, for a file, renames it into place. On failure the
    /// temporary file is removed and the target is left as it was.
    func close() throws {
        switch target {
        case .standardOutput:
            return
        case .inPlace:
            guard fd >= 0 else { return }
            let result = Glibc.close(fd)
            fd = -1
            if result != 0 { throw CLIError("cannot write '\(name)': \(OutputFile.reason(errno))") }
        case .replace(let final, let temporary):
            if fd >= 0 {
                let result = Glibc.close(fd)
                fd = -1
                if result != 0 {
                    let reason = OutputFile.reason(errno)
                    unlink(temporary)
                    throw CLIError("cannot write '\(name)': \(reason)")
                }
            }
            if rename(temporary, final) != 0 {
                let reason = OutputFile.reason(errno)
                unlink(temporary)
                throw CLIError("cannot write '\(name)': \(reason)")
            }
        }
    }

    /// After a failure: discards what was written. Only the temporary file is removed; a device,
    /// a pipe or the file the user named is never unlinked.
    func abandon() {
        switch target {
        case .standardOutput:
            return
        case .inPlace:
            if fd >= 0 { _ = Glibc.close(fd); fd = -1 }
        case .replace(_, let temporary):
            if fd >= 0 { _ = Glibc.close(fd); fd = -1 }
            unlink(temporary)
        }
    }

    // MARK: Helpers

    /// Refuses an output that is one of the inputs, by device and inode (so also through a symlink
    /// or another spelling of the path).
    static func refuseInputs(_ path: String, _ inputs: [String]) throws {
        guard let output = FileIdentity(path) else { return }
        for input in inputs where FileIdentity(input) == output {
            throw CLIError("cannot write '\(path)': it is the input '\(input)', which would be destroyed; choose another output file")
        }
    }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }

    static func resolvedPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func baseName(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    private static func makeDirectories(_ directory: String, for path: String) throws {
        var built = directory.hasPrefix("/") ? "" : "."
        for part in directory.split(separator: "/") {
            built += "/" + part
            if mkdir(built, 0o777) != 0 && errno != EEXIST {
                throw CLIError("cannot write '\(path)': cannot create the directory '\(built)' (\(reason(errno)))")
            }
        }
    }
}

/// A file's device and inode: the same file whatever path names it.
struct FileIdentity: Equatable {
    var device: UInt64
    var inode: UInt64

    init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
    }
}

/// What a path names (stat(2), links followed); nil, with errno set, when it cannot be looked at.
enum FileKind {
    case directory, regular
    /// A device, pipe or socket.
    case other

    init?(_ path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFDIR: self = .directory
        case S_IFREG: self = .regular
        default: self = .other
        }
    }
}
