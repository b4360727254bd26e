/// Key of `SQLiteConnection`'s statement cache: the SQL text, hashed by its length and a few
/// of its bytes instead of all of them.
///
/// Every statement run looks its prepared statement up by text, ~7 per step; hashing the
/// whole text (100–250 bytes through SipHash) made that lookup ~1,000 instructions, 4 % of a
/// storage replay's instructions (callgrind, docs/benchmarks.md "Pages per committed step").
/// Equality still compares the whole text, so two statements whose sampled bytes agree only
/// share a bucket; comparing a literal with itself is an identity check of its storage.
struct StatementKey: Hashable {
    let sql: String

    static func == (lhs: StatementKey, rhs: StatementKey) -> Bool { lhs.sql == rhs.sql }

    func hash(into hasher: inout Hasher) {
        var sql = self.sql
        // A no-op for native strings (all of ours); equal texts then hash alike whatever
        // their storage.
        sql.makeContiguousUTF8()
        _ = sql.utf8.withContiguousStorageIfAvailable { bytes in
            hasher.combine(bytes.count)
            guard let base = bytes.baseAddress, bytes.count > 16 else {
                for byte in bytes { hasher.combine(byte) }
                return
            }
            // 8 bytes from the middle and the last 8, as two integers: the cached statements
            // differ in their table and column names (middle) or their parameter lists
            // (end), rarely in both while having the same length.
            let raw = UnsafeRawPointer(base)
            hasher.combine(raw.loadUnaligned(fromByteOffset: bytes.count / 2, as: UInt64.self))
            hasher.combine(raw.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
        }
    }
}
