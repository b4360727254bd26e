/// Reads `--flag value` / `--flag=value` arguments one flag at a time, with typed errors; the
/// shared tokenizer of the benchmark's flag parsers (`BenchmarkOptions`,
/// `IdleFleetChildOptions`). Pure.
struct FlagReader {
    private let args: [String]
    private var index = 0
    /// The flag being read (without its `=value`).
    private(set) var flag = ""
    /// The value given as `--flag=value`, if any.
    private(set) var inline: String?

    init(_ args: [String]) {
        self.args = args
    }

    /// Advances to the next flag; false when none is left.
    mutating func next() -> Bool {
        guard index < args.count else { return false }
        flag = args[index]
        inline = nil
        if flag.hasPrefix("--"), let eq = flag.firstIndex(of: "=") {
            inline = String(flag[flag.index(after: eq)...])
            flag = String(flag[..<eq])
        }
        index += 1
        return true
    }

    /// The current flag's value: inline, else the next argument.
    mutating func value() throws(BenchmarkOptionsError) -> String {
        if let inline { return inline }
        guard index < args.count else { throw .missingValue(flag) }
        defer { index += 1 }
        return args[index]
    }

    mutating func integer(_ range: ClosedRange<Int>) throws(BenchmarkOptionsError) -> Int {
        let text = try value()
        guard let n = Int(text), range.contains(n) else {
            throw .invalidValue(flag: flag, value: text, expected: "an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }

    /// `soup` or `lean` (``PairClient``).
    mutating func client() throws(BenchmarkOptionsError) -> PairClient {
        let text = try value()
        guard let client = PairClient(rawValue: text) else {
            throw .invalidValue(flag: flag, value: text, expected: "soup or lean")
        }
        return client
    }

    mutating func seconds(_ range: ClosedRange<Double>) throws(BenchmarkOptionsError) -> Double {
        try decimal(range, unit: "seconds")
    }

    /// A rate per second.
    mutating func rate(_ range: ClosedRange<Double>) throws(BenchmarkOptionsError) -> Double {
        try decimal(range, unit: "setups/s")
    }

    /// A finite decimal in `range`; the error names `unit` and the range.
    private mutating func decimal(_ range: ClosedRange<Double>, unit: String) throws(BenchmarkOptionsError) -> Double {
        let text = try value()
        guard let n = Double(text), n.isFinite, range.contains(n) else {
            throw .invalidValue(flag: flag, value: text, expected: "\(unit) in \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }

    /// A WebSocket URL (`ws://` or `wss://`).
    mutating func webSocketURL() throws(BenchmarkOptionsError) -> String {
        let text = try value()
        guard text.hasPrefix("ws://") || text.hasPrefix("wss://"), text.count > 6 else {
            throw .invalidValue(flag: flag, value: text, expected: "a ws:// or wss:// URL")
        }
        return text
    }
}
