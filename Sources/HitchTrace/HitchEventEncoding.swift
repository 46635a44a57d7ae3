// How each of the project's events is written as FXT (the mapping docs/FORMAT.md documents).
// Callers pass resolved string refs for their own names; the vocabulary's words (HitchVocabulary.swift)
// are resolved here.

extension FXTEncoder {
    package func stringRef(_ category: HitchCategory) -> UInt16 { stringRef(vocabulary.categories[Int(category.rawValue)]) }
    package func stringRef(_ name: HitchEventName) -> UInt16 { stringRef(vocabulary.eventNames[Int(name.rawValue)]) }
    package func stringRef(_ argument: HitchArgument) -> UInt16 { stringRef(vocabulary.arguments[Int(argument.rawValue)]) }

    package func complete(thread: UInt8, category: UInt16, name: UInt16, begin: UInt64, end: UInt64) {
        beginEvent(.durationComplete, thread: thread, category: category, name: name, ticks: begin)
        endEvent(trailing: end)
    }

    package func durationBegin(thread: UInt8, category: UInt16, name: UInt16, ticks: UInt64) {
        beginEvent(.durationBegin, thread: thread, category: category, name: name, ticks: ticks)
        endEvent()
    }

    package func durationEnd(thread: UInt8, category: UInt16, name: UInt16, ticks: UInt64) {
        beginEvent(.durationEnd, thread: thread, category: category, name: name, ticks: ticks)
        endEvent()
    }

    package func instant(thread: UInt8, category: UInt16, name: UInt16, ticks: UInt64) {
        beginEvent(.instant, thread: thread, category: category, name: name, ticks: ticks)
        endEvent()
    }

    package func counter(thread: UInt8, category: UInt16, name: UInt16, ticks: UInt64, value: Double) {
        let valueArg = stringRef(HitchArgument.value)
        beginEvent(.counter, thread: thread, category: category, name: name, ticks: ticks)
        argDouble(valueArg, value)
        endEvent(trailing: 0)
    }

    package func frameBegan(thread: UInt8, ticks: UInt64, frameID: UInt64, vsyncTicks: UInt64, targetTicks: UInt64, periodNs: Int64) {
        let category = stringRef(HitchCategory.frame), name = stringRef(HitchEventName.frameBegan)
        let idArg = stringRef(HitchArgument.frameID), vsyncArg = stringRef(HitchArgument.vsyncTicks)
        let targetArg = stringRef(HitchArgument.targetTicks), periodArg = stringRef(HitchArgument.periodNs)
        beginEvent(.instant, thread: thread, category: category, name: name, ticks: ticks)
        argUnsigned(idArg, frameID)
        argUnsigned(vsyncArg, vsyncTicks)
        argUnsigned(targetArg, targetTicks)
        argSigned(periodArg, periodNs)
        endEvent()
    }

    /// frameCommitted, frameRenderEnded or framePresented (`name`).
    package func frameMark(_ markName: HitchEventName, thread: UInt8, ticks: UInt64, frameID: UInt64) {
        let category = stringRef(HitchCategory.frame), name = stringRef(markName), idArg = stringRef(HitchArgument.frameID)
        beginEvent(.instant, thread: thread, category: category, name: name, ticks: ticks)
        argUnsigned(idArg, frameID)
        endEvent()
    }

    package func body(thread: UInt8, viewType: UInt16, identity: UInt64, begin: UInt64, end: UInt64) {
        let category = stringRef(HitchCategory.body), identityArg = stringRef(HitchArgument.identity)
        beginEvent(.durationComplete, thread: thread, category: category, name: viewType, ticks: begin)
        argUnsigned(identityArg, identity)
        endEvent(trailing: end)
    }

    package func layout(thread: UInt8, begin: UInt64, end: UInt64, viewCount: UInt32) {
        let category = stringRef(HitchCategory.layout), name = stringRef(HitchEventName.layout), countArg = stringRef(HitchArgument.viewCount)
        beginEvent(.durationComplete, thread: thread, category: category, name: name, ticks: begin)
        argUnsigned(countArg, UInt64(viewCount))
        endEvent(trailing: end)
    }

    package func invalidation(thread: UInt8, ticks: UInt64, source: UInt16, target: UInt16, targetIdentity: UInt64, stack: UInt32?) {
        let category = stringRef(HitchCategory.invalidation), targetArg = stringRef(HitchArgument.target)
        let identityArg = stringRef(HitchArgument.targetIdentity), stackArg = stringRef(HitchArgument.stack)
        beginEvent(.instant, thread: thread, category: category, name: source, ticks: ticks)
        argString(targetArg, target)
        argUnsigned(identityArg, targetIdentity)
        if let stack { argUnsigned(stackArg, UInt64(stack)) }
        endEvent()
    }

    /// Category `hitch.view`, named by the view type; `change` and `reason` are string args.
    package func viewLifetime(thread: UInt8, ticks: UInt64, viewType: UInt16, change: ViewLifetimeChange, identity: UInt64,
                      parentIdentity: UInt64, position: Int64, reason: ViewLifetimeReason) {
        let category = stringRef(HitchCategory.view), changeArg = stringRef(HitchArgument.change), identityArg = stringRef(HitchArgument.identity)
        let parentArg = stringRef(HitchArgument.parentIdentity), positionArg = stringRef(HitchArgument.position)
        let reasonArg = stringRef(HitchArgument.reason)
        let changeName = stringRef(vocabulary.viewChanges[Int(change.rawValue)])
        let reasonName = stringRef(vocabulary.viewReasons[Int(reason.rawValue)])
        beginEvent(.instant, thread: thread, category: category, name: viewType, ticks: ticks)
        argString(changeArg, changeName)
        argUnsigned(identityArg, identity)
        argUnsigned(parentArg, parentIdentity)
        argSigned(positionArg, position)
        argString(reasonArg, reasonName)
        endEvent()
    }

    /// `byteKind` is written only when the producer said what the op reads (`unspecified` is left out).
    package func inferenceOp(thread: UInt8, name: UInt16, computeUnit: UInt16, layer: Int32, tokenIndex: Int32,
                     bytesRead: UInt64, bytesWritten: UInt64, flops: UInt64, byteKind: InferenceByteKind, begin: UInt64, end: UInt64) {
        let category = stringRef(HitchCategory.op), layerArg = stringRef(HitchArgument.layer), unitArg = stringRef(HitchArgument.computeUnit)
        let tokenArg = stringRef(HitchArgument.tokenIndex), readArg = stringRef(HitchArgument.bytesRead)
        let writtenArg = stringRef(HitchArgument.bytesWritten), flopsArg = stringRef(HitchArgument.flops)
        let kindArg = byteKind == .unspecified ? 0 : stringRef(HitchArgument.byteKind)
        let kindName = byteKind == .unspecified ? 0 : stringRef(vocabulary.byteKinds[Int(byteKind.rawValue)])
        beginEvent(.durationComplete, thread: thread, category: category, name: name, ticks: begin)
        argSigned(layerArg, Int64(layer))
        argString(unitArg, computeUnit)
        argSigned(tokenArg, Int64(tokenIndex))
        argUnsigned(readArg, bytesRead)
        argUnsigned(writtenArg, bytesWritten)
        argUnsigned(flopsArg, flops)
        if byteKind != .unspecified { argString(kindArg, kindName) }
        endEvent(trailing: end)
    }

    package func token(thread: UInt8, ticks: UInt64, stage: TokenStage, index: Int64) {
        let category = stringRef(HitchCategory.token), name = stringRef(vocabulary.tokenStages[Int(stage.rawValue)])
        let indexArg = stringRef(HitchArgument.index)
        beginEvent(.instant, thread: thread, category: category, name: name, ticks: ticks)
        argSigned(indexArg, index)
        endEvent()
    }

    /// An interaction's begin or end: an async event whose correlation id pairs the two.
    package func interaction(isBegin: Bool, thread: UInt8, ticks: UInt64, kind: UInt16, id: UInt64) {
        let category = stringRef(HitchCategory.interaction)
        beginEvent(isBegin ? .asyncBegin : .asyncEnd, thread: thread, category: category, name: kind, ticks: ticks)
        endEvent(trailing: id)
    }

    package func sample(thread: UInt8, ticks: UInt64, stack: UInt32) {
        let category = stringRef(HitchCategory.sample), name = stringRef(HitchEventName.sample), stackArg = stringRef(HitchArgument.stack)
        beginEvent(.instant, thread: thread, category: category, name: name, ticks: ticks)
        argUnsigned(stackArg, UInt64(stack))
        endEvent()
    }

    package func metadata(thread: UInt8, ticks: UInt64, key: UInt16, value: UInt16) {
        let category = stringRef(HitchCategory.meta), name = stringRef(HitchEventName.metadata)
        let keyArg = stringRef(HitchArgument.key), valueArg = stringRef(HitchArgument.value)
        beginEvent(.instant, thread: thread, category: category, name: name, ticks: ticks)
        argString(keyArg, key)
        argString(valueArg, value)
        endEvent()
    }

    package func droppedEvents(thread: UInt8, ticks: UInt64, count: UInt64) {
        let category = stringRef(HitchCategory.meta), name = stringRef(HitchEventName.droppedEvents), countArg = stringRef(HitchArgument.count)
        beginEvent(.instant, thread: thread, category: category, name: name, ticks: ticks)
        argUnsigned(countArg, count)
        endEvent()
    }

    /// Category `hitch.sched`, name `threadState`; absent readings are absent arguments.
    package func threadState(thread: UInt8, ticks: UInt64, frameID: UInt64, phase framePhase: FramePhase, cpuNs: Int64,
                     runnableWaitNs: Int64?, voluntarySwitches: Int64?, involuntarySwitches: Int64?) {
        let category = stringRef(HitchCategory.sched), name = stringRef(HitchEventName.threadState)
        let idArg = stringRef(HitchArgument.frameID), phaseArg = stringRef(HitchArgument.phase), phase = stringRef(vocabulary.threadStatePhases[Int(framePhase.rawValue)])
        let cpuArg = stringRef(HitchArgument.cpuNs), waitArg = stringRef(HitchArgument.runnableWaitNs)
        let voluntaryArg = stringRef(HitchArgument.voluntarySwitches), involuntaryArg = stringRef(HitchArgument.involuntarySwitches)
        beginEvent(.instant, thread: thread, category: category, name: name, ticks: ticks)
        argUnsigned(idArg, frameID)
        argString(phaseArg, phase)
        argSigned(cpuArg, cpuNs)
        if let runnableWaitNs { argSigned(waitArg, runnableWaitNs) }
        if let voluntarySwitches { argSigned(voluntaryArg, voluntarySwitches) }
        if let involuntarySwitches { argSigned(involuntaryArg, involuntarySwitches) }
        endEvent()
    }

    /// Category `hitch.sched`, name `machineState`; absent readings are absent arguments.
    package func machineState(thread: UInt8, ticks: UInt64, stealNs: Int64?, cpuPressureSomeUs: Int64?, cgroupThrottledUs: Int64?,
                      onlineCPUs: Int32) {
        let category = stringRef(HitchCategory.sched), name = stringRef(HitchEventName.machineState)
        let stealArg = stringRef(HitchArgument.stealNs), pressureArg = stringRef(HitchArgument.cpuPressureSomeUs)
        let throttledArg = stringRef(HitchArgument.cgroupThrottledUs), cpusArg = stringRef(HitchArgument.onlineCPUs)
        beginEvent(.instant, thread: thread, category: category, name: name, ticks: ticks)
        if let stealNs { argSigned(stealArg, stealNs) }
        if let cpuPressureSomeUs { argSigned(pressureArg, cpuPressureSomeUs) }
        if let cgroupThrottledUs { argSigned(throttledArg, cgroupThrottledUs) }
        argSigned(cpusArg, Int64(onlineCPUs))
        endEvent()
    }

    /// A context switch of `thread` as an FXT context switch record (record type 8, scheduling
    /// type 0): switched out, it is the outgoing thread, in state "running" when preempted (so
    /// viewers show it runnable) or "blocked" when it slept; switched in, it is the incoming thread.
    /// The other side of the switch is unknown to a per-thread source: the inline thread koid 0.
    package func contextSwitch(cpu: UInt16, ticks: UInt64, thread: UInt8, direction: SwitchDirection, preempted: Bool) {
        let isOut = direction == .switchedOut
        let state: UInt64 = isOut ? (preempted ? FXT.ThreadState.running : FXT.ThreadState.blocked) : FXT.ThreadState.running
        let outgoing: UInt64 = isOut ? UInt64(thread) : 0, incoming: UInt64 = isOut ? 0 : UInt64(thread)
        let words = 4
        let p = output.reserve(words)
        p[0] = FXT.RecordType.scheduling.rawValue | UInt64(words) << 4 | UInt64(cpu & 0xFF) << 16 | state << 24
            | outgoing << 28 | incoming << 36
        p[1] = ticks
        p[2] = 0   // the inline thread: process koid 0, thread koid 0
        p[3] = 0
        output.commit(words)
        countEvent()
    }

    /// Frames a stack definition blob holds at most (one record).
    package static let maxStackFrames = 4000

    /// Blob "hitch.stack": u32 stack id, u32 frame count, then the addresses (u64, innermost first).
    package func stackDefinition(stack: UInt32, addresses: [UInt64]) {
        let count = min(addresses.count, FXTEncoder.maxStackFrames)
        var payload = [UInt64](repeating: 0, count: 1 + count)
        payload[0] = UInt64(stack) | UInt64(count) << 32
        for i in 0..<count { payload[1 + i] = addresses[i] }
        payload.withUnsafeBytes { blob(name: vocabulary.blobs[Int(HitchBlobName.stack.rawValue)], payload: $0) }
    }

    /// Blob "hitch.symbol": u64 address, u64 size, u64 offset, u32 function length, u32 image
    /// length, then the function and image names (UTF-8, no terminators).
    package func symbol(address: UInt64, size: UInt64, offset: UInt64, function: String, image: String) {
        var bytes: [UInt8] = []
        let functionBytes = Array(function.utf8.prefix(16000)), imageBytes = Array(image.utf8.prefix(8000))
        bytes.reserveCapacity(32 + functionBytes.count + imageBytes.count)
        for word in [address, size, offset] { withUnsafeBytes(of: word.littleEndian) { bytes.append(contentsOf: $0) } }
        withUnsafeBytes(of: UInt32(functionBytes.count).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(imageBytes.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: functionBytes)
        bytes.append(contentsOf: imageBytes)
        bytes.withUnsafeBytes { blob(name: vocabulary.blobs[Int(HitchBlobName.symbol.rawValue)], payload: $0) }
    }
}
