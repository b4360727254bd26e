/// Severity, ordered `debug < info < warning < error`.
public enum LogLevel: String, Sendable, Comparable, CaseIterable, Codable {
    case debug, info, warning, error

    private var rank: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .warning: 2
        case .error: 3
        }
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }

    /// Parses a level name case-insensitively; `warn` is accepted for `warning`.
    public init?(parsing text: String) {
        let lowered = text.lowercased()
        if lowered == "warn" { self = .warning; return }
        self.init(rawValue: lowered)
    }
}
