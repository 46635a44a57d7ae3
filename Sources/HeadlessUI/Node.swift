// The live tree behind the view values: one node per view, keyed by identity. Updating a node
// re-evaluates its body (composite views, under `withObservationTracking`) or re-reads its
// children (primitives) and reconciles old and new children by identity.
import HitchTrace
import Observation
import Synchronization

@MainActor
final class ViewNode {
    let key: ChildKey
    var view: any View
    let typeName: ViewTypeName
    /// A stable number for this node's identity path, written to the trace with its events.
    let identity: UInt64
    weak var parent: ViewNode?
    var children: [ViewNode] = []
    /// True when the body must be re-evaluated (an observed property changed, or it is new).
    var needsUpdate = true
    var isMounted = true
    /// Bumped on each evaluation and on teardown; onChange callbacks from older tracking are ignored.
    var trackingGeneration: UInt64 = 0
    var frame = Rect(x: 0, y: 0, width: 0, height: 0)
    var layoutCache = LayoutCache()
    /// A Text's wrapped lines for the width it was placed at (the commit reuses them).
    var textLines: (width: Double, lines: [String])?
    var lazy: LazyListState?
    /// Index among the parent's children (a lazy list row's index in the data), for the trace.
    var position: Int
    /// True until its children are first reconciled: children built then are built with it.
    var isNewlyBuilt = true

    init(key: ChildKey, view: any View, parent: ViewNode?, position: Int = 0) {
        self.key = key
        self.position = position
        self.view = view
        self.parent = parent
        self.typeName = ViewTypeNames.name(of: view)
        var hasher = Hasher()
        hasher.combine(parent?.identity ?? 0)
        hasher.combine(key)
        self.identity = UInt64(bitPattern: Int64(hasher.finalize()))
    }

    var primitive: Primitive? { (view as? any PrimitiveView)?.primitive }
}

/// What an onChange callback needs to find its node again, and nothing it may not touch off-main.
struct InvalidationTarget: Sendable {
    let node: ViewNode
    let generation: UInt64
}

/// Counters tests and the frame loop read: how much work the last updates did.
public struct RuntimeStatistics: Sendable, Equatable {
    public var bodyEvaluations: [String: Int] = [:]
    public var nodesBuilt = 0
    public var nodesTornDown = 0
    public var nodesReused = 0
    public var invalidations: [InvalidationRecord] = []
    public var layoutPasses = 0
    public init() {}
}

public struct InvalidationRecord: Sendable, Equatable {
    public var source: String
    public var targetType: String
    public var targetIdentity: UInt64
}

/// Owns the tree and the update pass. Runs on the main actor; invalidations arrive from any
/// thread through a lock-protected inbox.
@MainActor
final class ViewGraph {
    var root: ViewNode
    var statistics = RuntimeStatistics()
    var recordsInvalidationList = false
    let captureWriterStacks: Bool
    private let inbox: Mutex<[InvalidationTarget]>
    private let inboxRecords: Mutex<[InvalidationRecord]>

    init(root: any View, captureWriterStacks: Bool) {
        self.root = ViewNode(key: .structural(position: 0, type: typeIdentity(of: root)), view: root, parent: nil)
        self.captureWriterStacks = captureWriterStacks
        inbox = Mutex([])
        inboxRecords = Mutex([])
    }

    // MARK: Invalidation

    nonisolated func invalidate(_ target: InvalidationTarget, typeName: ViewTypeName, identity: UInt64, captureStack: Bool, keepRecord: Bool) {
        let source = ObservedWrite.effectiveWriter
        Instrument.invalidation(source: source, target: typeName, identity: identity, captureStack: captureStack)
        inbox.withLock { $0.append(target) }
        if keepRecord {
            inboxRecords.withLock {
                $0.append(InvalidationRecord(source: source?.string ?? "unknown", targetType: typeName.string, targetIdentity: identity))
            }
        }
    }

    /// Moves invalidations from the inbox onto their nodes; true if any node became invalid.
    func applyPendingInvalidations() -> Bool {
        let targets = inbox.withLock { inbox in
            defer { inbox.removeAll(keepingCapacity: true) }
            return inbox
        }
        statistics.invalidations.append(contentsOf: inboxRecords.withLock { records in
            defer { records.removeAll() }
            return records
        })
        var any = false
        for target in targets where target.node.isMounted && target.node.trackingGeneration == target.generation {
            target.node.needsUpdate = true
            any = true
        }
        return any
    }

    // MARK: Update

    /// Updates every node that needs it, top-down.
    func updateInvalidNodes() {
        updateIfNeeded(root)
    }

    private func updateIfNeeded(_ node: ViewNode) {
        if node.needsUpdate {
            update(node)
        } else {
            for child in node.children { updateIfNeeded(child) }
        }
    }

    /// Re-evaluates a node and reconciles its children.
    func update(_ node: ViewNode) {
        node.needsUpdate = false
        node.textLines = nil
        var ancestor: ViewNode? = node
        while let current = ancestor, !(current.layoutCache.entries.isEmpty && current !== node) {
            current.layoutCache.invalidate()
            ancestor = current.parent
        }
        guard let primitive = node.primitive else {
            let child = evaluateBody(of: node)
            reconcile(node, with: [(.structural(position: 0, type: typeIdentity(of: child)), child)])
            return
        }
        switch primitive {
        case .empty, .text, .image, .color, .spacer:
            reconcile(node, with: [])
        case .group(let list), .stack(_, let list):
            let hasExplicitIdentity = list.children.contains { if case .explicit = $0.key { true } else { false } }
            if hasExplicitIdentity {
                Instrument.stage("diff") { reconcile(node, with: list.children) }
            } else {
                reconcile(node, with: list.children)
            }
        case .padding(_, let content), .frame(_, _, let content), .background(_, let content):
            reconcile(node, with: [(.structural(position: 0, type: typeIdentity(of: content)), content)])
        case .lazyList(let content):
            // Rows are materialized by layout, which knows the viewport; keep the ones we have.
            if node.lazy == nil { node.lazy = LazyListState() }
            node.lazy!.setContent(content)
            for child in node.children { updateIfNeeded(child) }
        }
    }

    private func evaluateBody(of node: ViewNode) -> any View {
        node.trackingGeneration &+= 1
        let target = InvalidationTarget(node: node, generation: node.trackingGeneration)
        let typeName = node.typeName, identity = node.identity
        let captureStack = captureWriterStacks, keepRecord = recordsInvalidationList
        statistics.bodyEvaluations[typeName.string, default: 0] += 1
        let view = node.view
        let body = withObservationTracking {
            Instrument.bodyEvaluation(typeName, identity: identity) { unwrapSingle(bodyOf(view)) }
        } onChange: { [self] in
            invalidate(target, typeName: typeName, identity: identity, captureStack: captureStack, keepRecord: keepRecord)
        }
        ObservedWrite.forgetLastAccess()
        return body
    }

    /// Same identity -> update in place; new identity -> build; identity gone -> tear down.
    /// `firstPosition` is the first child's position (a lazy list's first materialized row).
    func reconcile(_ node: ViewNode, with newChildren: [(key: ChildKey, view: any View)], firstPosition: Int = 0) {
        let parentIsNew = node.isNewlyBuilt
        node.isNewlyBuilt = false
        var old: [ChildKey: ViewNode] = [:]
        old.reserveCapacity(node.children.count)
        for child in node.children { old[child.key] = child }
        var result: [ViewNode] = []
        result.reserveCapacity(newChildren.count)
        for (offset, (key, view)) in newChildren.enumerated() {
            if let existing = old.removeValue(forKey: key) {
                let unchanged = !existing.needsUpdate && viewsEqual(existing.view, view)
                existing.view = view
                existing.position = firstPosition + offset
                statistics.nodesReused += 1
                if unchanged {
                    updateIfNeeded(existing)
                } else {
                    update(existing)
                }
                result.append(existing)
            } else {
                let child = ViewNode(key: key, view: view, parent: node, position: firstPosition + offset)
                statistics.nodesBuilt += 1
                Instrument.viewLifetime(.built, child, reason: parentIsNew ? .parentBuilt : key.isExplicit ? .newIdentity : .structuralChange)
                update(child)
                result.append(child)
            }
        }
        for (key, removed) in old { tearDown(removed, reason: key.isExplicit ? .identityRemoved : .structuralChange) }
        node.children = result
    }

    func tearDown(_ node: ViewNode, reason: ViewLifetime.Reason) {
        node.isMounted = false
        node.trackingGeneration &+= 1
        statistics.nodesTornDown += 1
        Instrument.viewLifetime(.tornDown, node, reason: reason)
        for child in node.children { tearDown(child, reason: .parentRemoved) }
        node.children = []
    }

    var nodeCount: Int {
        var count = 0
        func visit(_ node: ViewNode) { count += 1; node.children.forEach(visit) }
        visit(root)
        return count
    }
}

/// `view.body` through the existential.
@MainActor
func bodyOf(_ view: some View) -> any View { view.body }

/// A body of one view comes back from the builder as a one-element group; use the view itself.
@MainActor
func unwrapSingle(_ view: any View) -> any View {
    if let group = view as? ViewGroup, group.views.count == 1 { return unwrapSingle(group.views[0]) }
    return view
}

/// Equal view values need no update (SwiftUI compares view fields the same way); non-Equatable
/// views always update when their parent re-evaluates.
func viewsEqual(_ a: any View, _ b: any View) -> Bool {
    guard let a = a as? any Equatable else { return false }
    return isEqual(a, b)
}

private func isEqual<T: Equatable>(_ a: T, _ b: Any) -> Bool {
    guard let b = b as? T else { return false }
    return a == b
}
