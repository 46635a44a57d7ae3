import Foundation
import HitchAnalysis
import HitchReport

// Who a run is: the id that makes adding the same run twice a no-op, the machine it ran on, and
// its figures under their metric paths.

public enum RunIdentity {
    /// Hex SHA-256 of a file's bytes, read in 1 MB pieces (a trace can be gigabytes).
    public static func contentHash(path: String) throws(HistoryError) -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .invalid(FileManager.default.fileExists(atPath: path) ? "cannot read trace '\(path)'" : "no such trace '\(path)'")
        }
        defer { try? handle.close() }
        var hasher = SHA256.Hasher()
        while true {
            let chunk: Data
            do { chunk = try handle.read(upToCount: 1 << 20) ?? Data() } catch { throw .invalid("cannot read trace '\(path)': \(error.localizedDescription)") }
            if chunk.isEmpty { break }
            hasher.update(chunk)
        }
        return hex(hasher.finalize())
    }

    /// The run id: the traces' content hashes (in order), the commit and the machine, hashed.
    public static func runID(traceHashes: [String], commit: String, machine: MachineInfo) -> String {
        var hasher = SHA256.Hasher()
        let fields = traceHashes + [commit, machine.name, machine.cpuModel, String(machine.cores)]
        // Length-prefixed fields: no two different field lists give the same bytes.
        for field in fields {
            let bytes = Array(field.utf8)
            hasher.update(Array("\(bytes.count):".utf8))
            hasher.update(bytes)
        }
        return hex(hasher.finalize())
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes { text.append(digits[Int(byte >> 4)]); text.append(digits[Int(byte & 15)]) }
        return String(decoding: text, as: UTF8.self)
    }

    /// This machine: host name (or `name`), CPU model from /proc/cpuinfo, online cores; the refresh
    /// rate is the trace's (first recorded rate).
    public static func thisMachine(name: String? = nil, analysis: Analysis) -> MachineInfo {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        return MachineInfo(name: name ?? ProcessInfo.processInfo.hostName, cpuModel: model,
                           cores: ProcessInfo.processInfo.activeProcessorCount,
                           refreshHz: analysis.recordedRates.first?.rateHz ?? analysis.refreshRatesHz.first ?? 0)
    }

    /// The figures stored for a run: the ones `hitch diff` compares, under their metric paths, with
    /// the same normalization (per frame, per second), units, directions and noise floors.
    public static func metrics(of analysis: Analysis) -> [MetricValue] {
        analysis.comparedFigures().map {
            MetricValue(metric: $0.metric, value: $0.value, unit: $0.unit.rawValue, higherIsBetter: $0.higherIsBetter, absoluteFloor: $0.absoluteFloor)
        }
    }
}
