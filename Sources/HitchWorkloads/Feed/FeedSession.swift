// The scripted session: type a query one character at a time at a human pace, pause, then
// scroll the results with drags that end in flings and decelerate, as a finger would.
import Foundation
import HitchAlgorithms

public struct FeedScript: Sendable {
    public enum Action: Sendable, Equatable {
        case type(Character)
        /// A finger drag moved the content by `delta` points since the last event.
        case drag(delta: Double)
        /// The finger lifted while moving at `velocity` points per second.
        case release(velocity: Double)
    }

    public struct Event: Sendable {
        public var seconds: Double
        public var action: Action
    }

    public var events: [Event]
    public var typingInterval: ClosedRange<Double>
    public var scrollStart: Double?

    public static let defaultQuery = "swift cache"

    /// The session for `seconds` of wall time; events past the end are left out.
    public static func make(seconds: Double, seed: UInt64, query: String = defaultQuery) -> FeedScript {
        var random = SeededGenerator(seed: seed ^ 0x5EED)
        var events: [Event] = []
        var time = 0.6
        let typingStart = time
        for character in query {
            events.append(Event(seconds: time, action: .type(character)))
            time += Double.random(in: 0.13...0.24, using: &random)
        }
        let typingEnd = time + 0.4
        time = typingEnd + 0.8
        let scrollStart = time
        // Drag, fling, let it decelerate; again, a little faster each time.
        var flings = 0
        while time < seconds - 0.5 {
            let dragVelocity = 1400.0 + 500 * Double(flings) + Double.random(in: -150...150, using: &random)
            let step = 1.0 / 120
            for _ in 0..<30 {
                events.append(Event(seconds: time, action: .drag(delta: dragVelocity * step)))
                time += step
            }
            events.append(Event(seconds: time, action: .release(velocity: dragVelocity * 1.6)))
            time += 1.5 + Double.random(in: 0...0.3, using: &random)
            flings += 1
        }
        return FeedScript(events: events.filter { $0.seconds < seconds }, typingInterval: typingStart...typingEnd,
                          scrollStart: scrollStart < seconds ? scrollStart : nil)
    }
}

/// Scroll physics: drags move the content directly; a release flings it, and the velocity decays
/// as UIScrollView's normal deceleration does (x 0.998 per millisecond).
public struct ScrollPhysics: Sendable {
    public var offset = 0.0
    public var velocity = 0.0
    public var isDragging = false
    public static let decelerationPerMs = 0.998
    public static let restingVelocity = 12.0

    public init() {}

    public var isMoving: Bool { isDragging || abs(velocity) > Self.restingVelocity }

    public mutating func drag(_ delta: Double, maxOffset: Double) {
        isDragging = true
        velocity = 0
        offset = min(max(0, offset + delta), maxOffset)
    }

    public mutating func release(velocity: Double) {
        isDragging = false
        self.velocity = velocity
    }

    /// Advances a fling by `seconds`; stops at either end of the content.
    public mutating func advance(seconds: Double, maxOffset: Double) {
        guard !isDragging, abs(velocity) > Self.restingVelocity else {
            if !isDragging { velocity = 0 }
            return
        }
        let milliseconds = seconds * 1000
        let decay = pow(Self.decelerationPerMs, milliseconds)
        // Distance is the integral of v * d^t over the step.
        let distance = velocity * (decay - 1) / log(Self.decelerationPerMs) / 1000
        velocity *= decay
        offset += distance
        if offset <= 0 || offset >= maxOffset {
            offset = min(max(0, offset), maxOffset)
            velocity = 0
        }
    }
}
