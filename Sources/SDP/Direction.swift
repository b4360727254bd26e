/// Media direction attributes (RFC 8866 §6.7, RFC 3264 §6.1).
public enum Direction: String, Sendable, Hashable, CaseIterable {
    case sendrecv
    case sendonly
    case recvonly
    case inactive

    public init(sends: Bool, receives: Bool) {
        switch (sends, receives) {
        case (true, true): self = .sendrecv
        case (true, false): self = .sendonly
        case (false, true): self = .recvonly
        case (false, false): self = .inactive
        }
    }

    public var sends: Bool { self == .sendrecv || self == .sendonly }
    public var receives: Bool { self == .sendrecv || self == .recvonly }

    /// The same direction seen from the other side (sendonly ↔ recvonly).
    public var reversed: Direction { Direction(sends: receives, receives: sends) }

    /// The most an answerer may choose for an offer in this direction (RFC 3264 §6.1): it may
    /// send only if the offerer receives, and receive only if the offerer sends.
    public func answerLimited(to wanted: Direction) -> Direction {
        Direction(sends: wanted.sends && receives, receives: wanted.receives && sends)
    }
}

extension SDPAttributeContainer {
    /// The explicit direction attribute, if any; RFC 8866 §6.7 says absence means sendrecv.
    public var explicitDirection: Direction? {
        for attribute in attributes where attribute.value == nil {
            if let direction = Direction(rawValue: attribute.name) { return direction }
        }
        return nil
    }
}

extension MediaDescription {
    /// The section's direction, falling back to sendrecv (RFC 8866 §6.7).
    public var direction: Direction {
        get { explicitDirection ?? .sendrecv }
        set {
            if let index = attributes.firstIndex(where: { $0.value == nil && Direction(rawValue: $0.name) != nil }) {
                attributes[index] = SDPAttribute(newValue.rawValue)
            } else {
                addAttribute(newValue.rawValue)
            }
        }
    }
}

/// `a=setup` (RFC 4145 §4, RFC 5763 §5): which side opens the DTLS association.
public enum DTLSSetup: String, Sendable, Hashable {
    /// Offerer can be either; an offer must use actpass (RFC 5763 §5).
    case actpass
    /// The DTLS client.
    case active
    /// The DTLS server.
    case passive
    case holdconn
}
