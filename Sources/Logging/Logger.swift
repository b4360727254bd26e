import Foundation

/// Structured JSON-lines logger: one JSON object per line with `ts` (RFC 3339, UTC,
/// milliseconds), `level`, `subsystem`, `msg` and `fields`.
///
/// Redaction happens here, not at call sites: sensitive field keys and JWT-looking values are
/// replaced by `[redacted]` (see ``Redaction``), and JWT-looking text in `msg` is scrubbed.
public struct Logger: Sendable {
    public let subsystem: String
    public let sink: LogSink
    public let minimumLevel: LogLevel
    private let clock: @Sendable () -> Date

    /// `clock` exists so tests get fixed timestamps; production uses the wall clock.
    public init(subsystem: String, sink: LogSink = .stderr, minimumLevel: LogLevel = .info,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.subsystem = subsystem
        self.sink = sink
        self.minimumLevel = minimumLevel
        self.clock = clock
    }

    /// Same sink, level and clock under another subsystem name.
    public func withSubsystem(_ subsystem: String) -> Logger {
        Logger(subsystem: subsystem, sink: sink, minimumLevel: minimumLevel, clock: clock)
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= minimumLevel }

    public func debug(_ message: String, _ fields: [String: LogValue] = [:]) { log(.debug, message, fields) }
    public func info(_ message: String, _ fields: [String: LogValue] = [:]) { log(.info, message, fields) }
    public func warning(_ message: String, _ fields: [String: LogValue] = [:]) { log(.warning, message, fields) }
    public func error(_ message: String, _ fields: [String: LogValue] = [:]) { log(.error, message, fields) }

    public func log(_ level: LogLevel, _ message: String, _ fields: [String: LogValue] = [:]) {
        guard isEnabled(level) else { return }
        sink.write(line: Self.render(time: clock(), level: level, subsystem: subsystem, message: message, fields: fields))
    }

    /// The exact line written (without newline). Applies redaction.
    public static func render(time: Date, level: LogLevel, subsystem: String, message: String, fields: [String: LogValue]) -> String {
        var out = "{\"ts\":"
        JSONText.appendString(RFC3339.format(time), to: &out)
        out += ",\"level\":"
        JSONText.appendString(level.rawValue, to: &out)
        out += ",\"subsystem\":"
        JSONText.appendString(subsystem, to: &out)
        out += ",\"msg\":"
        JSONText.appendString(Redaction.scrubMessage(message), to: &out)
        out += ",\"fields\":"
        JSONText.append(.object(Redaction.redactFields(fields)), to: &out)
        out += "}"
        return out
    }
}
