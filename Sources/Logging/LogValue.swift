/// A JSON value attached to a log line as a field.
public enum LogValue: Sendable, Equatable {
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null
    case array([LogValue])
    case object([String: LogValue])
}

extension LogValue: ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension LogValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension LogValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension LogValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension LogValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension LogValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: LogValue...) { self = .array(elements) }
}

extension LogValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, LogValue)...) {
        var object: [String: LogValue] = [:]
        for (key, value) in elements { object[key] = value }
        self = .object(object)
    }
}

extension LogValue {
    /// Convenience for non-literal integers.
    public static func integer<I: BinaryInteger>(_ value: I) -> LogValue {
        .int(Int64(clamping: value))
    }
}
