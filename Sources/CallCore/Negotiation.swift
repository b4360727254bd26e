/// The two ends of a 1:1 call.
public enum CallSide: String, Codable, Sendable, Equatable {
    case caller
    case callee

    public var other: CallSide { self == .caller ? .callee : .caller }
}

/// A description the server accepted and relayed: a pending offer, or the last answer.
public struct NegotiatedDescription: Codable, Sendable, Equatable {
    public var side: CallSide
    public var generation: Int64
    public var description: SessionDescription

    public init(side: CallSide, generation: Int64, description: SessionDescription) {
        self.side = side
        self.generation = generation
        self.description = description
    }
}

/// Candidates held for one device until the peer can use them (§4 case 6).
public struct CandidateBuffer: Codable, Sendable, Equatable {
    /// The negotiation generation all buffered candidates belong to.
    public var generation: Int64
    public var candidates: [IceCandidate]

    public init(generation: Int64, candidates: [IceCandidate]) {
        self.generation = generation
        self.candidates = candidates
    }
}

/// Offer/answer bookkeeping of one call (call-design §1 "negotiation generation").
///
/// - `generation` is server-assigned: each accepted offer gets `generation + 1`; its answer
///   and the candidates of that round carry it. The invite's offer is generation 1; a call
///   invited without an offer starts at 0.
/// - Renegotiation glare (§4 case 10) follows W3C perfect negotiation
///   (https://w3c.github.io/webrtc-pc/#perfect-negotiation-example): the callee is polite.
///   If an offer arrives while the other side's offer is pending, the impolite caller's offer
///   replaces the pending one; the polite callee's offer is refused with `glare` (the callee
///   rolls back and answers the caller's offer it already received).
public struct Negotiation: Codable, Sendable, Equatable {
    public var generation: Int64
    /// The accepted offer still waiting for its answer.
    public var pendingOffer: NegotiatedDescription?
    /// The last accepted answer; lets a repeated answer be recognised as a duplicate.
    public var lastAnswer: NegotiatedDescription?
    /// The caller's current ICE ufrag, from its latest description.
    public var callerUfrag: String?
    /// The callee's current ICE ufrag, from its latest description.
    public var calleeUfrag: String?
    /// The polite side of W3C perfect negotiation: always the callee.
    public var politeSide: CallSide
    /// Candidates buffered per sending device, bounded by
    /// ``CallConfig/candidateBufferLimit``; dropped on end.
    public var buffered: [DeviceKey: CandidateBuffer]

    public init(
        generation: Int64 = 0,
        pendingOffer: NegotiatedDescription? = nil,
        lastAnswer: NegotiatedDescription? = nil,
        callerUfrag: String? = nil,
        calleeUfrag: String? = nil,
        politeSide: CallSide = .callee,
        buffered: [DeviceKey: CandidateBuffer] = [:]
    ) {
        self.generation = generation
        self.pendingOffer = pendingOffer
        self.lastAnswer = lastAnswer
        self.callerUfrag = callerUfrag
        self.calleeUfrag = calleeUfrag
        self.politeSide = politeSide
        self.buffered = buffered
    }

    public func ufrag(of side: CallSide) -> String? {
        side == .caller ? callerUfrag : calleeUfrag
    }

    /// Records the ufrag of a new description of `side`; a description without one keeps the
    /// previous ICE session's.
    public mutating func noteDescription(_ description: SessionDescription, of side: CallSide) {
        guard let ufrag = description.iceUfrag else { return }
        if side == .caller { callerUfrag = ufrag } else { calleeUfrag = ufrag }
    }
}
