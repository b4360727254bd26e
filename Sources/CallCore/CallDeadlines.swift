/// The kinds of server-side deadline a call can have. The host stores the absolute time from
/// ``CallEffect/scheduleDeadline(_:at:)`` and feeds ``CallEvent/deadlineFired(_:)`` back.
public enum DeadlineKind: String, Codable, Sendable, Equatable, CaseIterable, Comparable {
    /// Ends a ringing call with `noAnswer`.
    case ring
    /// Ends a ringing call with `expired` (backstop behind `ring`).
    case inviteExpiry
    /// Ends a connecting call with `connectFailed`.
    case connect
    /// Ends a reconnecting call with `mediaLost`.
    case reconnect

    public static func < (lhs: DeadlineKind, rhs: DeadlineKind) -> Bool {
        lhs.rank < rhs.rank
    }

    private var rank: Int {
        switch self {
        case .ring: return 0
        case .inviteExpiry: return 1
        case .connect: return 2
        case .reconnect: return 3
        }
    }
}

/// Pending deadlines of one call, absolute server wall-clock ms (survive a restart).
public struct CallDeadlines: Codable, Sendable, Equatable {
    public var ring: Int64?
    public var inviteExpiry: Int64?
    public var connect: Int64?
    public var reconnect: Int64?

    public init(ring: Int64? = nil, inviteExpiry: Int64? = nil, connect: Int64? = nil, reconnect: Int64? = nil) {
        self.ring = ring
        self.inviteExpiry = inviteExpiry
        self.connect = connect
        self.reconnect = reconnect
    }

    public subscript(kind: DeadlineKind) -> Int64? {
        get {
            switch kind {
            case .ring: return ring
            case .inviteExpiry: return inviteExpiry
            case .connect: return connect
            case .reconnect: return reconnect
            }
        }
        set {
            switch kind {
            case .ring: ring = newValue
            case .inviteExpiry: inviteExpiry = newValue
            case .connect: connect = newValue
            case .reconnect: reconnect = newValue
            }
        }
    }

    /// Pending deadlines in ``DeadlineKind`` order.
    public var pending: [(kind: DeadlineKind, at: Int64)] {
        DeadlineKind.allCases.compactMap { kind in self[kind].map { (kind, $0) } }
    }
}
