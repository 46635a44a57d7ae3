// The recorder's raw records: what the hot path stores in a thread's buffer (32 bytes each,
// `hitch_record` in CHitchSupport/include/hitch_recorder.h) before the writer thread turns them
// into FXT. Word 1 carries the kind in its top byte and, for most kinds, a TraceName address
// (user-space addresses fit in 56 bits).
//
// kind              records  w0            w1 (low 56 bits)     w2              w3
// complete          1        begin ticks   name                 category        end ticks
// instant           1        ticks         name                 category        0
// counter           1        ticks         name                 category        Double bits
// interactionBegin  1        ticks         kind name            async id        0
// interactionEnd    1        ticks         kind name            async id        0
// frameBegan        2        ticks         0                    frameID         vsync ticks
//                            target ticks  periodNs             0               0
// frameCommitted    1        ticks         0                    frameID         0
// frameRenderEnded  1        ticks         0                    frameID         0
// framePresented    1        ticks         0                    frameID         0
// body              1        begin ticks   view type name       identity        end ticks
// layout            1        begin ticks   view count           end ticks       0
// invalidation      2        ticks         source name          target name     target identity
//                            stack+1 (0: none) 0                0               0
// inferenceOp       2        begin ticks   op name              compute unit | byteKind << 56   end ticks
//                            layer | tokenIndex << 32   bytesRead   bytesWritten   flops
// token             1        ticks         stage                index           0
// viewLifetime      2        ticks         view type name       identity        parent identity
//                            position      change | reason << 8 0               0
// completeArgs      2        begin ticks   name                 category        end ticks
//                            argument 1 (name | type << 56), value 1, argument 2, value 2
// instantArgs       2        ticks         name                 category        0
//                            argument 1, value 1, argument 2, value 2 (as completeArgs)
// asyncBegin        2        ticks         name                 category        async id
//                            parent async id (0: none)   0     0               0
// asyncEnd          2        ticks         name                 category        async id
//                            begin ticks   self ticks           0               0
// threadState       2        ticks         phase                frameID         cpu ns
//                            runnable-wait ns   voluntary      involuntary     0
//                            (written by C: hitch_thread_state_emit; UInt64.max = unavailable)
//
// Argument types (top byte of an argument word): 0 none, 1 Int64, 2 Double bits, 3 TraceName.
// A name with bit 55 set is a dynamic name's id (TraceName.dynamicNameBit), not an address.

@usableFromInline
enum RawKind: UInt64 {
    case complete = 1
    case instant = 2
    case counter = 3
    case interactionBegin = 4
    case interactionEnd = 5
    case frameBegan = 6
    case frameCommitted = 7
    case frameRenderEnded = 8
    case framePresented = 9
    case body = 10
    case layout = 11
    case invalidation = 12
    case inferenceOp = 13
    case token = 14
    case viewLifetime = 15
    case completeArgs = 16
    case instantArgs = 17
    case asyncBegin = 18
    case asyncEnd = 19
    /// HITCH_RAW_KIND_THREAD_STATE in hitch_sched.h.
    case threadState = 20

    /// Records this kind takes in a buffer.
    var recordCount: Int {
        switch self {
        case .frameBegan, .invalidation, .inferenceOp, .viewLifetime, .completeArgs, .instantArgs, .asyncBegin, .asyncEnd,
             .threadState: 2
        default: 1
        }
    }

    @inlinable @inline(__always)
    func word(_ payload: UInt64) -> UInt64 { rawValue << 56 | payload }
}

@usableFromInline let rawPayloadMask: UInt64 = (1 << 56) - 1
