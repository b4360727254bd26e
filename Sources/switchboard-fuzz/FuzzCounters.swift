/// How many inputs reached the deepest step of each target (replay mode prints them), so a
/// corpus that stops reaching e.g. the SFU answer or the STUN success reply is noticed.
/// Single-threaded: both modes run one input at a time.
enum FuzzCounters {
    nonisolated(unsafe) static var reached: [String: Int] = [:]

    static func hit(_ step: String) { reached[step, default: 0] += 1 }

    /// "step=count" pairs for steps starting with `prefix`, then cleared.
    static func drain(prefix: String) -> String {
        let steps = reached.filter { $0.key.hasPrefix(prefix) }.sorted { $0.key < $1.key }
        for step in steps { reached[step.key] = nil }
        return steps.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }
}
