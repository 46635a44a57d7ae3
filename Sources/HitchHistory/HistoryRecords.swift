// What the history store keeps: runs (one `hitch history add`), the machine they ran on, and each
// figure under its metric path (the names budgets and `hitch diff` use).

/// The machine a run was recorded on.
public struct MachineInfo: Sendable, Equatable, Codable {
    /// Host name, or `--machine NAME` (a CI runner's label).
    public var name: String
    public var cpuModel: String
    public var cores: Int
    /// The trace's display refresh rate (the first recorded rate), 0 when it recorded none.
    public var refreshHz: Double

    public init(name: String, cpuModel: String, cores: Int, refreshHz: Double) {
        self.name = name
        self.cpuModel = cpuModel
        self.cores = cores
        self.refreshHz = refreshHz
    }
}

/// One stored figure.
public struct MetricValue: Sendable, Equatable, Codable {
    /// A metric path, e.g. `hitches.120.hitchTimeRatioMsPerS`.
    public var metric: String
    public var value: Double
    /// What the value counts, as `hitch diff` normalizes it ("ms/s", "ms per frame", "per s").
    public var unit: String
    public var higherIsBetter: Bool
    /// The smallest absolute change that matters (below it a change is noise, whatever its percent).
    public var absoluteFloor: Double

    public init(metric: String, value: Double, unit: String = "", higherIsBetter: Bool = false, absoluteFloor: Double = 0) {
        self.metric = metric
        self.value = value
        self.unit = unit
        self.higherIsBetter = higherIsBetter
        self.absoluteFloor = absoluteFloor
    }
}

/// One run: what `hitch history add` writes, and what the store reads back.
public struct RunRecord: Sendable, Equatable, Codable {
    /// Hex SHA-256 of the traces' content, the commit and the machine (`RunIdentity.runID`).
    public var id: String
    public var commit: String
    public var branch: String
    /// When the run was added, in milliseconds since 1970 (UTC); runs of a branch are ordered by it.
    public var timeMs: Int64
    public var machine: MachineInfo
    public var tags: [String: String]
    /// The trace files' names as given (for people; the id is what identifies the run).
    public var traces: [String]
    /// Filled when written; empty in what `runs(…)` returns (see `HistorySeries` for values).
    public var metrics: [MetricValue]

    public init(id: String, commit: String, branch: String, timeMs: Int64, machine: MachineInfo,
                tags: [String: String] = [:], traces: [String] = [], metrics: [MetricValue] = []) {
        self.id = id
        self.commit = commit
        self.branch = branch
        self.timeMs = timeMs
        self.machine = machine
        self.tags = tags
        self.traces = traces
        self.metrics = metrics
    }
}

/// A metric's values along a branch's runs (nil where a run lacks the figure).
public struct MetricSeries: Sendable, Equatable {
    public var metric: String
    public var unit: String
    public var higherIsBetter: Bool
    public var absoluteFloor: Double
    public var values: [Double?]
}

/// A branch's runs, oldest first, and every requested metric aligned with them.
public struct HistorySeries: Sendable, Equatable {
    public var runs: [RunRecord]
    public var metrics: [MetricSeries]
}
