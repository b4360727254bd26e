/// Parsers for configuration value syntax. Each throws ``ConfigValueProblem`` with a reason
/// that becomes part of ``ConfigError/invalidValue(key:value:reason:_:)``.
struct ConfigValueProblem: Error {
    let reason: String
}

enum ConfigValues {
    /// Durations: an integer followed by `ms`, `s`, `m`, `h` or `d` ("500ms", "60s", "24h").
    /// A unit is required so "60" cannot be misread as milliseconds or minutes.
    static func duration(_ text: String) throws(ConfigValueProblem) -> Duration {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        for (suffix, milliseconds) in units where text.hasSuffix(suffix) {
            let digits = String(text.dropLast(suffix.count))
            // "ms" also ends in "s": only accept if the rest is all digits.
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Int64(digits), number >= 0 else { continue }
            let (total, overflow) = number.multipliedReportingOverflow(by: milliseconds)
            guard !overflow else { throw ConfigValueProblem(reason: "duration too large") }
            return .milliseconds(total)
        }
        throw ConfigValueProblem(reason: "expected a duration like 500ms, 60s, 15m, 24h or 7d")
    }

    /// Renders in seconds ("60s", "3600s"), whole days as hours ("24h"), and sub-second
    /// values in milliseconds ("500ms"): the forms the defaults are documented in.
    static func render(_ duration: Duration) -> String {
        let ms = milliseconds(duration)
        if ms >= 86_400_000, ms % 86_400_000 == 0 { return "\(ms / 3_600_000)h" }
        if ms % 1000 == 0 { return "\(ms / 1000)s" }
        return "\(ms)ms"
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Integer in `range`.
    static func integer(_ text: String, in range: ClosedRange<Int>) throws(ConfigValueProblem) -> Int {
        guard let value = Int(text), range.contains(value) else {
            throw ConfigValueProblem(reason: "expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    /// Byte size: integer with optional `KiB` or `MiB` suffix, in `range`.
    static func size(_ text: String, in range: ClosedRange<Int>) throws(ConfigValueProblem) -> Int {
        var digits = text
        var multiplier = 1
        if text.hasSuffix("KiB") { digits = String(text.dropLast(3)); multiplier = 1024 }
        else if text.hasSuffix("MiB") { digits = String(text.dropLast(3)); multiplier = 1024 * 1024 }
        guard let number = Int(digits), number >= 0, case let (value, false) = number.multipliedReportingOverflow(by: multiplier),
              range.contains(value)
        else {
            throw ConfigValueProblem(reason: "expected a byte size like 65536 or 64KiB, from \(range.lowerBound) to \(range.upperBound) bytes")
        }
        return value
    }

    static func renderSize(_ bytes: Int) -> String {
        if bytes != 0, bytes % (1024 * 1024) == 0 { return "\(bytes / (1024 * 1024))MiB" }
        if bytes != 0, bytes % 1024 == 0 { return "\(bytes / 1024)KiB" }
        return "\(bytes)"
    }

    /// Comma-separated list; items trimmed, empty items dropped.
    static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { trim(String($0)) }.filter { !$0.isEmpty }
    }

    static func trim(_ text: String) -> String {
        var slice = Substring(text)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" || last == "\r" { slice.removeLast() }
        return String(slice)
    }

    static func hasWhitespaceOrControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }
}
