import Foundation

/// One line of the idle-fleet child's progress protocol: the child
/// (`switchboard bench idle-fleet`, ``IdleFleetChild``) writes one JSON object per line on
/// its stdout whenever its counts change (at most every ``IdleFleetChild/reportIntervalMs``),
/// and the parent (``IdleChildProcess``) keeps the latest. Every line carries the full state,
/// so a lost or late line only delays the parent's view.
///
///     {"type":"progress","connected":2500,"failed":0,"dropped":0,"settled":true,"connectSeconds":4.2,"errors":{}}
public struct IdleChildMessage: Codable, Equatable, Sendable {
    /// Always "progress" (the only message; a new kind gets a new value).
    public var type: String
    /// Devices welcomed so far.
    public var connected: Int
    /// Devices whose connect or hello failed.
    public var failed: Int
    /// Devices that closed after their welcome.
    public var dropped: Int
    /// Every device of the child is welcomed or failed.
    public var settled: Bool
    /// Seconds from the child's first connect to settling; nil until settled.
    public var connectSeconds: Double?
    /// Error counters of the child's devices (the same keys as the in-process fleet's).
    public var errors: [String: Int]

    public init(connected: Int, failed: Int, dropped: Int, settled: Bool, connectSeconds: Double?, errors: [String: Int]) {
        type = Self.progressType
        self.connected = connected
        self.failed = failed
        self.dropped = dropped
        self.settled = settled
        self.connectSeconds = connectSeconds
        self.errors = errors
    }

    public static let progressType = "progress"

    /// One line, without the newline; keys sorted so lines are stable.
    public func line() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// Parses and checks one line from a child that holds `count` devices.
    public static func parse(_ line: String, count: Int) throws(IdleChildProtocolError) -> IdleChildMessage {
        let message: IdleChildMessage
        do {
            message = try JSONDecoder().decode(IdleChildMessage.self, from: Data(line.utf8))
        } catch {
            throw .notAMessage(String(line.prefix(80)))
        }
        guard message.type == progressType else { throw .unknownType(message.type) }
        for (name, value) in [("connected", message.connected), ("failed", message.failed), ("dropped", message.dropped)] where value < 0 {
            throw .negative(name)
        }
        if let seconds = message.connectSeconds, !(seconds.isFinite && seconds >= 0) { throw .negative("connectSeconds") }
        guard message.connected + message.failed <= count, message.dropped <= message.connected else {
            throw .inconsistent("connected \(message.connected) + failed \(message.failed) of \(count), dropped \(message.dropped)")
        }
        guard message.settled == (message.connectSeconds != nil) else {
            throw .inconsistent("settled \(message.settled) with connectSeconds \(message.connectSeconds.map { "\($0)" } ?? "null")")
        }
        if message.settled, message.connected + message.failed != count {
            throw .inconsistent("settled with \(message.connected + message.failed) of \(count) devices")
        }
        return message
    }
}

/// Why a child's stdout line was refused (the parent then counts the child as broken).
public enum IdleChildProtocolError: Error, Equatable, CustomStringConvertible {
    /// Not a JSON object with the message's fields (the first 80 characters).
    case notAMessage(String)
    case unknownType(String)
    case negative(String)
    case inconsistent(String)

    public var description: String {
        switch self {
        case .notAMessage(let text): return "not a progress line: \(text)"
        case .unknownType(let type): return "unknown message type \(type)"
        case .negative(let field): return "\(field) is negative"
        case .inconsistent(let detail): return "inconsistent counts: \(detail)"
        }
    }
}
