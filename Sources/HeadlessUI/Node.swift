// The live tree behind the view values: one node per view, keyed by identity. Updating a node
// re-evaluates its body (composite views, under `withObservationTracking`) or re-reads its
// children (primitives) and reconciles old and new children by identity.
import HitchTrace
import Observation
import Synchronization

@MainActor
final class ViewNode {
    let key: ChildKey
    /// The view value; set through `setView` so `typeInfo` follows a change of type.
    private(set) var view: any View
    private var viewType: ObjectIdentifier
    /// How to read the view's primitive and compare its values, found once per view type.
    private var typeInfo: ViewTypeInfo
    /// What this node is for layout and commit, resolved by each update from the view's
    /// `Primitive` (a stored enum, so the per-frame passes neither cast nor rebuild child lists).
    var kind: NodeKind = .composite
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
    /// True when `frame` and every descendant's frame were placed for the node's current subtree
    /// (cleared with the layout cache): placing it again at the same size only moves it.
    var placementIsCurrent = false
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
        self.viewType = typeIdentity(of: view)
        self.typeInfo = ViewTypeNames.info(of: view)
        self.parent = parent
        self.typeName = typeInfo.name
        var hasher = Hasher()
        hasher.combine(parent?.identity ?? 0)
        hasher.combine(key)
        self.identity = UInt64(bitPattern: Int64(hasher.finalize()))
    }

    func setView(_ newView: any View) {
        let newType = typeIdentity(of: newView)
        if newType != viewType {
            viewType = newType
            typeInfo = ViewTypeNames.info(of: newView)
        }
        view = newView
    }

    /// The primitive's description, built from the view: only when the node updates.
    var primitive: Primitive? { typeInfo.primitive?(view) }

    /// Equal values need no update (SwiftUI compares view fields the same way); values of a
    /// non-Equatable type, or of another type, always count as changed.
    func viewIsEqual(to other: any View) -> Bool {
        guard let equals = typeInfo.equals, typeIdentity(of: other) == viewType else { return false }
        return equals(view, other)
    }
}

/// A node's kind with the fields layout and commit read; children are the node's own.
@MainActor
enum NodeKind {
    case composite
    case empty
    case text(Text)
    case image(Image)
    case color(Color, Size?)
    case spacer(minLength: Double)
    case group
    case stack(StackLayout)
    case padding(EdgeInsets)
    case frame(width: Double?, height: Double?)
    case background(Color)
    case lazyList

    init(_ primitive: Primitive) {
        switch primitive {
        case .empty: self = .empty
        case .text(let text): self = .text(text)
        case .image(let image): self = .image(image)
        case .color(let color, let size): self = .color(color, size)
        case .spacer(let minLength): self = .spacer(minLength: minLength)
        case .group: self = .group
        case .stack(let layout, _): self = .stack(layout)
        case .padding(let insets, _): self = .padding(insets)
        case .frame(let width, let height, _): self = .frame(width: width, height: height)
        case .background(let color, _): self = .background(color)
        case .lazyList: self = .lazyList
        }
    }

    var isSpacer: Bool { if case .spacer = self { true } else { false } }
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
    /// Mounted nodes, kept as they are built and torn down (the layout pass reports it every frame).
    private(set) var nodeCount = 0
    /// Nanoseconds spent diffing children by identity since the host last took it (`takeDiffNs`).
    private var diffNs: Int64 = 0
    private let inbox: Mutex<[InvalidationTarget]>
    private let inboxRecords: Mutex<[InvalidationRecord]>
    /// The inbox's other buffer: swapped in under the lock so draining allocates nothing.
    private var drainedTargets: [InvalidationTarget] = []
    /// Reused by the lazy list's row diff, so a frame that scrolls a row in allocates no array.
    var rowScratch: [ViewNode] = []
    /// Reused by stack layout for child sizes (a stack nested in a stack takes the next slice).
    var sizeScratch: [Size] = []
    var flexibilityScratch: [Double] = []
    /// The last display list's length, reserved for the next.
    var lastDisplayItemCount = 0

    init(root: any View, captureWriterStacks: Bool) {
        self.root = ViewNode(key: .structural(position: 0, type: typeIdentity(of: root)), view: root, parent: nil)
        nodeCount = 1
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
        var targets = drainedTargets
        drainedTargets = []
        inbox.withLock { swap(&$0, &targets) }
        if recordsInvalidationList {
            statistics.invalidations.append(contentsOf: inboxRecords.withLock { records in
                defer { records.removeAll() }
                return records
            })
        }
        var any = false
        for target in targets where target.node.isMounted && target.node.trackingGeneration == target.generation {
            target.node.needsUpdate = true
            any = true
        }
        targets.removeAll(keepingCapacity: true)
        drainedTargets = targets
        return any
    }

    // MARK: Update

    /// Updates every node that needs it, top-down.
    func updateInvalidNodes() {
        updateIfNeeded(root)
    }

    func updateIfNeeded(_ node: ViewNode) {
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
        // This node's size and placement, and every ancestor's, may change.
        var ancestor: ViewNode? = node
        while let current = ancestor {
            current.layoutCache.invalidate()
            current.placementIsCurrent = false
            ancestor = current.parent
        }
        guard let primitive = node.primitive else {
            node.kind = .composite
            let child = evaluateBody(of: node)
            reconcile(node, with: [(.structural(position: 0, type: typeIdentity(of: child)), child)])
            return
        }
        node.kind = NodeKind(primitive)
        switch primitive {
        case .empty, .text, .image, .color, .spacer:
            reconcile(node, with: [])
        case .group(let list), .stack(_, let list):
            let hasExplicitIdentity = list.children.contains { if case .explicit = $0.key { true } else { false } }
            if hasExplicitIdentity {
                measuringDiff { reconcile(node, with: list.children) }
            } else {
                reconcile(node, with: list.children)
            }
        case .padding(_, let content), .frame(_, _, let content), .background(_, let content):
            reconcile(node, with: [(.structural(position: 0, type: typeIdentity(of: content)), content)])
        case .lazyList(let content):
            // Rows are materialized by layout, which knows the viewport; it matches the rows it
            // has against the new content by id, over the materialized rows only.
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
        // One child of the same identity (a composite's body, a modifier's content) is the common
        // case: no table needed.
        if newChildren.count == 1, node.children.count == 1, node.children[0].key == newChildren[0].key {
            reuse(node.children[0], with: newChildren[0].view, position: firstPosition)
            return
        }
        var old: [ChildKey: ViewNode] = [:]
        old.reserveCapacity(node.children.count)
        for child in node.children { old[child.key] = child }
        var result: [ViewNode] = []
        result.reserveCapacity(newChildren.count)
        for (offset, (key, view)) in newChildren.enumerated() {
            if let existing = old.removeValue(forKey: key) {
                reuse(existing, with: view, position: firstPosition + offset)
                result.append(existing)
            } else {
                let reason: ViewLifetimeReason = parentIsNew ? .parentBuilt : key.isExplicit ? .newIdentity : .structuralChange
                result.append(buildNode(key: key, view: view, parent: node, position: firstPosition + offset, reason: reason))
            }
        }
        for (key, removed) in old { tearDown(removed, reason: key.isExplicit ? .identityRemoved : .structuralChange) }
        node.children = result
    }

    /// Gives a kept node its new view value; updates it unless the value is equal and it is valid.
    func reuse(_ existing: ViewNode, with view: any View, position: Int) {
        let unchanged = !existing.needsUpdate && existing.viewIsEqual(to: view)
        existing.setView(view)
        existing.position = position
        statistics.nodesReused += 1
        if unchanged {
            updateIfNeeded(existing)
        } else {
            update(existing)
        }
    }

    /// Every node is made here: it is counted and recorded with why, then updated (its body or
    /// children built).
    func buildNode(key: ChildKey, view: any View, parent: ViewNode, position: Int, reason: ViewLifetimeReason) -> ViewNode {
        let child = ViewNode(key: key, view: view, parent: parent, position: position)
        statistics.nodesBuilt += 1
        nodeCount += 1
        Instrument.viewLifetime(.built, child, reason: reason)
        update(child)
        return child
    }

    /// Every node leaves here: unmounted (late invalidations for it are ignored), recorded with
    /// why, with its subtree.
    func tearDown(_ node: ViewNode, reason: ViewLifetimeReason) {
        node.isMounted = false
        node.trackingGeneration &+= 1
        statistics.nodesTornDown += 1
        nodeCount -= 1
        Instrument.viewLifetime(.tornDown, node, reason: reason)
        for child in node.children { tearDown(child, reason: .parentRemoved) }
        node.children = []
    }

    /// Runs a diff, recorded as the `diff` stage and added to the frame's diff time.
    func measuringDiff<T>(_ body: () -> T) -> T {
        let start = MonotonicClock.nowNs()
        defer { diffNs += MonotonicClock.nowNs() - start }
        return Instrument.stage("diff", body)
    }

    /// The diff time since the last call.
    func takeDiffNs() -> Int64 {
        defer { diffNs = 0 }
        return diffNs
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

