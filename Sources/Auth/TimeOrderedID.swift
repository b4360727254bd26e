/// The leading part of time-ordered identifiers (the server's callIDs, and the benchmark's
/// eventIDs and callIDs): Unix milliseconds as 12 lowercase hex digits, zero-padded, so that
/// as text they sort in time order (until 16^12 ms, the year 10889). Rows keyed by such IDs
/// are appended at the right edge of their B-trees instead of at random leaves
/// (docs/benchmarks.md, "Time-ordered eventIDs" and "Time-ordered callIDs").
public enum TimeOrderedID {
    public static let prefixLength = 12

    /// `wallMillis` (negative counts as 0) as 12 hex digits.
    public static func prefix(wallMillis: Int64) -> String {
        let hex = String(UInt64(max(0, wallMillis)), radix: 16)
        return String(repeating: "0", count: max(0, prefixLength - hex.count)) + hex
    }
}
