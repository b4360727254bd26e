extension SQLiteCallStore {
    /// Bytes of the database's pages that hold data, as of the last commit (pages still in
    /// the WAL included): `(page_count − freelist_count) × page_size`
    /// (https://sqlite.org/pragma.html#pragma_page_count). Pages freed by deletes are on the
    /// freelist, which SQLite reuses before it grows the file, so they are not counted; the
    /// file itself never shrinks (no VACUUM).
    public func bytesInUse() throws -> Int64 {
        try locked { connection in
            let pages = try connection.scalarInt("PRAGMA page_count") ?? 0
            let free = try connection.scalarInt("PRAGMA freelist_count") ?? 0
            let pageSize = try connection.scalarInt("PRAGMA page_size") ?? 0
            return max(0, pages - free) * pageSize
        }
    }
}
