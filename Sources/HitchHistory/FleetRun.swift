import Foundation
import HitchAnalysis
import HitchReport
import HitchTrace

// A fleet's figures as one stored run (`hitch merge --db`): the figures `hitch diff` compares, of
// the fleet's analysis, and the spread of its traces' hitch time ratios.

extension RunIdentity {
    /// The run of a fleet: its id hashes the fleet summary's canonical JSON (`state`), the commit and
    /// the machine name, so the same traces merged again (in any order) are the same run.
    public static func fleetRun(state: Data, figures: FleetFigures, commit: String, branch: String, machineName: String,
                                tags: [String: String], timeMs: Int64) -> RunRecord {
        var hasher = SHA256.Hasher()
        hasher.update(state)
        let machine = MachineInfo(name: machineName, cpuModel: figures.fleet.metadata[MetadataKey.cpu.name] ?? "fleet", cores: 0,
                                  refreshHz: figures.fleet.recordedRates.first?.rateHz ?? figures.refreshRatesHz.first ?? 0)
        var allTags = tags
        allTags["kind"] = "fleet"
        allTags["traces"] = String(figures.traces)
        return RunRecord(id: runID(traceHashes: [hex(hasher.finalize())], commit: commit, machine: machine), commit: commit, branch: branch,
                         timeMs: timeMs, machine: machine, tags: allTags, traces: ["\(figures.traces) traces (digest \(figures.pathDigest))"],
                         metrics: metrics(of: figures.fleet) + fleetMetrics(figures))
    }

    /// `fleet.traces` and the percentiles of the traces' recorded hitch time ratios.
    static func fleetMetrics(_ figures: FleetFigures) -> [MetricValue] {
        var values = [MetricValue(metric: "fleet.traces", value: Double(figures.traces), unit: "traces", higherIsBetter: true, absoluteFloor: 1)]
        let ratios = figures.traceRatios.ratioMsPerS
        guard ratios.count > 0 else { return values }
        for (name, value) in [("p50", ratios.p50), ("p90", ratios.p90), ("p99", ratios.p99)] {
            values.append(MetricValue(metric: "fleet.traceHitchTimeRatioMsPerS.\(name)", value: value, unit: "ms/s", absoluteFloor: 0.5))
        }
        return values
    }
}
