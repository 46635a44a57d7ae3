import HitchTrace

/// The reader's fixed string ids: every vocabulary word is interned first, in this order, so a
/// decoded category, name or string argument is one subtraction and a range check away from its case.
enum FixedStringIDs {
    static let argumentBase: UInt32 = 1
    static let categoryBase = argumentBase + count(HitchArgument.self)
    static let eventNameBase = categoryBase + count(HitchCategory.self)
    static let blobBase = eventNameBase + count(HitchEventName.self)
    static let tokenStageBase = blobBase + count(HitchBlobName.self)
    static let viewChangeBase = tokenStageBase + count(TokenStage.self)
    static let viewReasonBase = viewChangeBase + count(ViewLifetimeChange.self)
    static let byteKindBase = viewReasonBase + count(ViewLifetimeReason.self)
    static let switchDirectionBase = byteKindBase + count(InferenceByteKind.self)
    static let end = switchDirectionBase + count(SwitchDirection.self)

    /// The words in id order from `argumentBase` (id 0 is the empty string).
    static let words: [String] = HitchArgument.names + HitchCategory.names + HitchEventName.names + HitchBlobName.names
        + TokenStage.names + ViewLifetimeChange.names + ViewLifetimeReason.names + InferenceByteKind.names
        + SwitchDirection.names

    private static func count<Word: TraceWord>(_: Word.Type) -> UInt32 { UInt32(Word.allCases.count) }
}
