#if canImport(Glibc)
import Glibc
#endif

// Reading another tool's file: whole (small dumps) or its first bytes (format sniffing).

/// The whole file, refusing one over `limit` bytes.
func readWholeFile(_ path: String, limit: Int) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw ImportError(file: path, location: "open", expected: "a readable file (\(String(cString: strerror(errno))))") }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR { continue }
            throw ImportError(file: path, location: "byte \(bytes.count)", expected: "readable data (\(String(cString: strerror(errno))))")
        }
        if count == 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
        if bytes.count > limit { throw ImportError(file: path, location: "byte \(limit)", expected: "a file under \(limit >> 20) MB") }
    }
    return bytes
}

/// The first `count` bytes of a file (fewer if it is shorter).
func readHead(_ path: String, count: Int) throws -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw ImportError(file: path, location: "open", expected: "a readable file (\(String(cString: strerror(errno))))") }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
        let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, count - filled) }
        if got < 0, errno == EINTR { continue }
        if got <= 0 { break }
        filled += got
    }
    return Array(bytes[0..<filled])
}
