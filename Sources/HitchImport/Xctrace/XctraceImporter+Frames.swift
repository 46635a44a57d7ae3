import HitchReader
import HitchTrace

// The frames of an xctrace export, reconstructed once every table is read (XctraceImporter.swift
// says how): each present becomes a frame with Apple's verdict beside it.

extension XctraceImporter {
    /// Turns the presents into frames, Apple's hitches into their lateness and verdicts (or with no
    /// presents, the hitches into the platform's own), then writes the hangs. Call after the last file.
    public mutating func finish(into sink: ImportSink) {
        if presents.isEmpty { writeHitchesAlone(into: sink) } else { writeFrames(into: sink) }
        writeHangs(into: sink)
    }

    /// The presents as frames, each with Apple's verdict.
    private mutating func writeFrames(into sink: ImportSink) {
        // The app: the process with the most hitches, else the most presents.
        var counts: [Int64: Int] = [:]
        for hitch in hitches { counts[hitch.pid, default: 0] += 1 }
        if counts.isEmpty { for present in presents { counts[present.pid, default: 0] += 1 } }
        let app = counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key ?? presents[0].pid
        // Presents of other processes are left out (a row with an empty process among named ones
        // too); where no present names a process (display-surface-swap has no process column),
        // every one is kept.
        if app != 0, presents.contains(where: { $0.pid != 0 }) { presents.removeAll { $0.pid != app } }
        presents.sort { $0.atNs < $1.atNs }
        let frames = presents
        vsyncIntervals.sort { $0.atNs < $1.atNs }
        let processName = processNames[app] ?? "app"
        let main = mainThread ?? sink.thread(pid: UInt64(bitPattern: app), tid: UInt64(bitPattern: app), name: "Main Thread", role: .main)
        appPid = app
        appMainThread = main
        let renderServer = renderServerThread(sink)
        sink.metadata(.importedFrom, ImportFormat.xctrace.rawValue, thread: main, timestampNs: frames[0].atNs)
        // Instruments' display tables say when each frame was shown, not when its work began: the
        // frame starts written below are placeholders, not work to replay at another rate.
        sink.metadata(.frameWorkTimes, "none", thread: main, timestampNs: frames[0].atNs)
        sink.metadata(.process, processName, thread: main, timestampNs: frames[0].atNs)
        var bySwap: [Int64: Int] = [:]
        for (index, hitch) in hitches.enumerated() where hitch.pid == app || app == 0 {
            if let swap = hitch.swap { bySwap[swap] = index }
        }
        updateEnds.sort { ($0.swap, $0.endNs) < ($1.swap, $1.endNs) }
        renderEnds.sort { ($0.swap, $0.endNs) < ($1.swap, $1.endNs) }
        gpuEnds.sort { ($0.swap, $0.endNs) < ($1.swap, $1.endNs) }
        var used = Set<Int>()
        var steps: [Int64] = []
        var vsyncIndex = 0
        var hitchCursor = 0
        let appHitches = hitches.enumerated().filter { $0.element.pid == app || app == 0 }.sorted { $0.element.startNs &+ $0.element.durationNs < $1.element.startNs &+ $1.element.durationNs }
        for (index, present) in frames.enumerated() {
            if index > 0 {
                let step = present.atNs - frames[index - 1].atNs
                if step >= 2_000_000, step <= 100_000_000 { steps.append(step); if steps.count > 16 { steps.removeFirst() } }
            }
            while vsyncIndex + 1 < vsyncIntervals.count, vsyncIntervals[vsyncIndex + 1].atNs <= present.atNs { vsyncIndex += 1 }
            let period = vsyncIntervals.isEmpty || vsyncIntervals[vsyncIndex].atNs > present.atNs
                ? displayPeriod(present.display) ?? (steps.min() ?? (frames.count > 1 ? nil : 16_666_667)) ?? nextStep(frames, from: index)
                : vsyncIntervals[vsyncIndex].periodNs
            // Apple's hitch on this present: by swap id, else the one that ends within half a period of it.
            var hitch: Hitch?
            if present.swap >= 0, let match = bySwap[present.swap], !used.contains(match) {
                hitch = hitches[match]; used.insert(match)
            } else {
                while hitchCursor < appHitches.count, appHitches[hitchCursor].element.startNs &+ appHitches[hitchCursor].element.durationNs < present.atNs - period / 2 { hitchCursor += 1 }
                if hitchCursor < appHitches.count, !used.contains(appHitches[hitchCursor].offset),
                   abs(appHitches[hitchCursor].element.startNs &+ appHitches[hitchCursor].element.durationNs - present.atNs) <= period / 2 {
                    hitch = appHitches[hitchCursor].element; used.insert(appHitches[hitchCursor].offset)
                }
            }
            let lateness = hitch?.durationNs ?? 0
            let expected = present.atNs - lateness
            let vsync = expected - 2 * period
            let frameID = UInt64(index + 1)
            sink.emit(TraceEvent(timestampNs: vsync, thread: main, payload: .frameBegan(FrameBegan(frameID: frameID, vsyncNs: vsync, targetNs: expected - period, periodNs: period))))
            sink.emitPlatformVerdict(hitch.map { $0.isSystem ? .jankyElsewhere : .janky } ?? .onTime, frameID: frameID, atNs: vsync, thread: main,
                                     detail: hitch.map { $0.narrative.isEmpty ? "hitch" : $0.narrative.clipped(to: 200) }, hitchNs: hitch?.durationNs)
            // The app's commit and the render server's render of this swap, where the export has them
            // (within the frame: after its vsync, by its present).
            func inFrame(_ t: Int64) -> Bool { t >= vsync && t <= present.atNs }
            let commit = Self.end(of: present.swap, in: updateEnds, pid: app).flatMap { inFrame($0) ? $0 : nil }
            sink.emit(TraceEvent(timestampNs: commit ?? expected - period, thread: main, payload: .frameCommitted(frameID: frameID)))
            // The render ends when both the render server and the GPU are done with the swap.
            let renderEnd = [Self.end(of: present.swap, in: renderEnds, pid: nil), Self.end(of: present.swap, in: gpuEnds, pid: nil)]
                .compactMap { $0 }.filter(inFrame).max()
            if let render = renderEnd {
                sink.emit(TraceEvent(timestampNs: render, thread: renderServer, payload: .frameRenderEnded(frameID: frameID)))
            }
            sink.emit(TraceEvent(timestampNs: present.atNs, thread: renderServer, payload: .framePresented(frameID: frameID)))
        }
        let unmatched = hitches.indices.filter { !used.contains($0) && (hitches[$0].pid == app || app == 0) }.count
        if unmatched > 0 { sink.skip("Apple hitches that matched no present (by swap id or time)", count: unmatched) }
    }

    /// Apple's hitches with no display table to give frames (the `hitches` table exported alone): the
    /// app's hitches (its process's: the one with the most) as `platform.hitch` begin and end
    /// instants, system ones (`is-system`) marked as not the app's; the refresh rate from
    /// display-vsyncs-interval or device-display-info, else from the hitches' durations (whole
    /// periods of 60, 90 or 120 Hz, the lowest rate that fits all), said as metadata `refreshRateHz`;
    /// the export's span from the earliest time any row names to the latest.
    mutating func writeHitchesAlone(into sink: ImportSink) {
        guard !hitches.isEmpty else { return }
        var counts: [Int64: Int] = [:]
        for hitch in hitches { counts[hitch.pid, default: 0] += 1 }
        let app = counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key ?? 0
        let own = hitches.filter { $0.pid == app }.sorted { $0.startNs < $1.startNs }
        if own.count < hitches.count { sink.skip("hitches of processes other than the app", count: hitches.count - own.count) }
        let main = mainThread ?? sink.thread(pid: UInt64(bitPattern: app), tid: UInt64(bitPattern: app), name: "Main Thread", role: .main)
        appPid = app
        appMainThread = main
        let start = min(firstTimeNs, own[0].startNs)
        let period = vsyncIntervals.min(by: { $0.atNs < $1.atNs })?.periodNs ?? displayPeriod(-1) ?? Self.period(fittingDurations: own.map(\.durationNs))
        sink.metadata(.importedFrom, ImportFormat.xctrace.rawValue, thread: main, timestampNs: start)
        sink.metadata(.frameWorkTimes, "none", thread: main, timestampNs: start)
        if let name = processNames[app] { sink.metadata(.process, name, thread: main, timestampNs: start) }
        let rate = (1e10 / Double(period)).rounded() / 10
        sink.metadata(.refreshRateHz, rate == rate.rounded() ? String(Int(rate)) : String(rate), thread: main, timestampNs: start)
        let category = sink.string(PlatformHitch.category), end = sink.string(PlatformHitch.endName)
        for hitch in own {
            let verdict: PlatformVerdict = hitch.isSystem ? .jankyElsewhere : .janky
            let label = verdict.label(detail: hitch.narrative.isEmpty ? "hitch" : hitch.narrative.clipped(to: 200))
            sink.emit(TraceEvent(timestampNs: hitch.startNs, thread: main, payload: .instant(category: category, name: sink.string(label))))
            sink.emit(TraceEvent(timestampNs: hitch.startNs &+ hitch.durationNs, thread: main, payload: .instant(category: category, name: end)))
        }
        // The export's end, where a row names a later time than the last hitch's end.
        if lastTimeNs > own.map({ $0.startNs &+ $0.durationNs }).max() ?? .min {
            sink.emit(TraceEvent(timestampNs: lastTimeNs, thread: main, payload: .instant(category: category, name: sink.string(PlatformHitch.exportEndName))))
        }
    }

    /// The `potential-hangs` and `hang-risks` rows as hangs (source `instruments`, Apple's word as the
    /// type) of the app: the process frames or hitches were written for, else the one with the most
    /// rows; rows of other processes are counted and skipped. A row without a thread is the app's main
    /// thread's. With nothing else written, the import's metadata (format, process) is said here.
    mutating func writeHangs(into sink: ImportSink) {
        guard !platformHangs.isEmpty else { return }
        var app = appPid
        if app == nil {
            var counts: [Int64: Int] = [:]
            for hang in platformHangs { counts[hang.pid, default: 0] += 1 }
            app = counts.max { ($0.value, $1.key) < ($1.value, $0.key) }?.key
        }
        let own = platformHangs.filter { $0.pid == app || $0.pid == 0 || app == 0 }.sorted { $0.startNs < $1.startNs }
        if own.count < platformHangs.count {
            sink.skip("potential-hangs and hang-risks rows of processes other than the app", count: platformHangs.count - own.count)
        }
        guard let first = own.first, let app else { return }
        let main = appMainThread ?? sink.thread(pid: UInt64(bitPattern: app), tid: UInt64(bitPattern: app), name: "Main Thread", role: .main)
        if appPid == nil {
            sink.metadata(.importedFrom, ImportFormat.xctrace.rawValue, thread: main, timestampNs: first.startNs)
            if let name = processNames[app] { sink.metadata(.process, name, thread: main, timestampNs: first.startNs) }
        }
        let source = sink.string(HangSourceWord.instruments)
        for hang in own {
            sink.emit(TraceEvent(timestampNs: hang.startNs, thread: hang.thread ?? main, payload: .hang(Hang(
                endNs: hang.startNs &+ hang.durationNs, source: source, type: sink.string(hang.type)))))
        }
    }

    /// The refresh period the hitches' durations are whole numbers of (within 10%): the longest of
    /// 60, 90 and 120 Hz's that fits them all, else the shortest duration.
    static func period(fittingDurations durations: [Int64]) -> Int64 {
        for period: Int64 in [16_666_667, 11_111_111, 8_333_333] {
            let fits = durations.allSatisfy { duration in
                let periods = (Double(duration) / Double(period)).rounded()
                return periods >= 1 && abs(Double(duration) - periods * Double(period)) <= 0.1 * Double(period)
            }
            if fits { return period }
        }
        return max(1_000_000, durations.filter { $0 > 0 }.min() ?? 16_666_667)
    }

    /// A display's refresh period from `device-display-info`: the present's display, else the main
    /// display, else the only one.
    private func displayPeriod(_ display: Int64) -> Int64? {
        if let period = displayPeriods[display] { return period }
        if let main = mainDisplay, let period = displayPeriods[main] { return period }
        return displayPeriods.count == 1 ? displayPeriods.first?.value : nil
    }

    /// The latest end recorded for `swap` (of process `pid` when given), from a list sorted by swap;
    /// at most 64 rows of one swap are looked at (a swap has one commit and one render per surface).
    private static func end(of swap: Int64, in list: [SwapEnd], pid: Int64?) -> Int64? {
        guard swap >= 0 else { return nil }
        var low = 0, high = list.count
        while low < high { let mid = (low + high) / 2; if list[mid].swap < swap { low = mid + 1 } else { high = mid } }
        var latest: Int64?
        let limit = min(list.count, low + 64)
        while low < limit, list[low].swap == swap {
            if pid == nil || pid == 0 || list[low].pid == 0 || list[low].pid == pid { latest = max(latest ?? .min, list[low].endNs) }
            low += 1
        }
        return latest
    }

    /// The step to the next present (the first frame's period before any step is known).
    private func nextStep(_ frames: [Present], from index: Int) -> Int64 {
        var step = Int64.max
        for i in (index + 1)..<min(frames.count, index + 17) {
            let s = frames[i].atNs - frames[i - 1].atNs
            if s >= 2_000_000, s <= 100_000_000 { step = min(step, s) }
        }
        return step == .max ? 16_666_667 : step
    }
}
