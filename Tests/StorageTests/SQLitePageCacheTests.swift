import CSQLite
import Foundation
import XCTest
@testable import Storage

/// The page-cache wrapper (`SQLitePageCache`, `sb_pcache_*` in CSQLite's shim.h): its key
/// translation through its C entry points, and real files driven through B-tree rebalances
/// that swap sibling pages (the case the wrapper exists for).
final class SQLitePageCacheTests: StorageTestCase {
    func testWrapperIsSQLitesPageCacheOnceAConnectionIsOpen() throws {
        let store = try openStore()
        try insert("c1", into: store)
        XCTAssertTrue(SQLitePageCache.isInstalled)
        // Installed means SQLite already initialized: a second configuration is refused.
        XCTAssertEqual(sb_pcache_install(), SQLITE_MISUSE)
    }

    func testParkingKeyIsBalanceNonrootsPgnoTemp() {
        // btree.c balance_nonroot: pgnoTemp = PENDING_BYTE / pageSize + 1, PENDING_BYTE = 1 GiB.
        XCTAssertEqual(SQLitePageCache.parkingKey(pageSize: 4096), 262_145)
        XCTAssertEqual(SQLitePageCache.parkingKey(pageSize: 512), 2_097_153)
        XCTAssertEqual(SQLitePageCache.parkingKey(pageSize: 65_536), 16_385)
    }

    /// Drives a cache made by the wrapper's xCreate the way sqlite3PcacheMove does during a
    /// swap, and looks inside the inner cache: the parked page sits under key 0 there, the
    /// wrapper answers for it under the parking number, and a truncate below the parking
    /// number drops it as SQLite's own cache would.
    func testParkedPageIsStoredUnderKeyZeroAndTruncatedAsBefore() throws {
        _ = try openStore()  // SQLite initialized with the wrapper, so the inner cache is live
        XCTAssertTrue(SQLitePageCache.isInstalled)
        let methods = SQLitePageCache.methods
        let inner = SQLitePageCache.innerMethods
        let create = try XCTUnwrap(methods.xCreate), destroy = try XCTUnwrap(methods.xDestroy)
        let fetch = try XCTUnwrap(methods.xFetch), rekey = try XCTUnwrap(methods.xRekey)
        let truncate = try XCTUnwrap(methods.xTruncate), pagecount = try XCTUnwrap(methods.xPagecount)
        let innerFetch = try XCTUnwrap(inner.xFetch)
        let parking = SQLitePageCache.parkingKey(pageSize: 4096)

        // 4096-byte pages, 64 bytes of extra per page (pcache1 writes the first 8), purgeable.
        let cache = try XCTUnwrap(create(4096, 64, 1))
        defer { destroy(cache) }
        try XCTUnwrap(methods.xCachesize)(cache, 100)
        let innerCache = try XCTUnwrap(SQLitePageCache.innerCache(of: cache))
        var pages: [UInt32: UnsafeMutablePointer<sqlite3_pcache_page>] = [:]
        for key in UInt32(1)...5 { pages[key] = try XCTUnwrap(fetch(cache, key, 2)) }
        let parkedBefore = SQLitePageCache.parkedRekeys

        // balance_nonroot's swap of pages 3 and 5: 3 -> parking, 5 -> 3, parking -> 5.
        XCTAssertNil(fetch(cache, parking, 0))
        rekey(cache, pages[3], 3, parking)
        XCTAssertEqual(fetch(cache, parking, 0), pages[3])
        XCTAssertEqual(innerFetch(innerCache, 0, 0), pages[3], "parked page must sit under key 0 of the inner cache")
        XCTAssertNil(innerFetch(innerCache, parking, 0), "the inner cache must never see the parking number")
        XCTAssertNil(fetch(cache, 3, 0))
        rekey(cache, pages[5], 5, 3)
        rekey(cache, pages[3], parking, 5)
        XCTAssertEqual(fetch(cache, 5, 0), pages[3])
        XCTAssertEqual(fetch(cache, 3, 0), pages[5])
        XCTAssertNil(fetch(cache, parking, 0))
        XCTAssertNil(innerFetch(innerCache, 0, 0))
        XCTAssertEqual(pagecount(cache), 5)
        XCTAssertEqual(SQLitePageCache.parkedRekeys - parkedBefore, 1)

        // A page left at the parking number (never the case between SQLite's calls, but the
        // truncate must still mean "drop keys >= limit"): kept above, dropped below.
        rekey(cache, pages[4], 4, parking)
        truncate(cache, parking + 1)
        XCTAssertEqual(pagecount(cache), 5)
        XCTAssertEqual(fetch(cache, parking, 0), pages[4])
        truncate(cache, 6)
        XCTAssertEqual(pagecount(cache), 4)
        XCTAssertNil(fetch(cache, parking, 0))
        XCTAssertNil(innerFetch(innerCache, 0, 0))
        XCTAssertEqual(fetch(cache, 5, 0), pages[3])
        XCTAssertEqual(fetch(cache, 1, 0), pages[1])
        truncate(cache, 2)
        XCTAssertEqual(pagecount(cache), 1)
        XCTAssertNil(fetch(cache, 5, 0))

        // A real fetch of the parking number (the pager does that for a corrupt file that
        // points at the pending-byte page) gets a page stored under 0 too, and discarding it
        // (what getPageNormal does before returning SQLITE_CORRUPT) leaves nothing behind.
        let real = try XCTUnwrap(fetch(cache, parking, 2))
        XCTAssertEqual(innerFetch(innerCache, 0, 0), real)
        try XCTUnwrap(methods.xUnpin)(cache, real, 1)
        XCTAssertNil(fetch(cache, parking, 0))
        XCTAssertEqual(pagecount(cache), 1)
    }

    /// Random text keys under a UNIQUE index split leaves all over the tree, and the three-way
    /// rebalances renumber siblings through the parking number; some transactions roll back,
    /// some delete. The file must stay intact and hold exactly the committed rows, seen by a
    /// second connection, after a checkpoint and after a reopen. Run with the store's 32 MiB
    /// cache and with a 16-page cache (evictions and spills in mid-transaction).
    func testRandomKeyInsertsWithPageSwapsKeepTheFileIntact() throws {
        for cachePages in [-32 * 1024, 16] {
            try driveRandomKeys(path: directory.appendingPathComponent("random-\(cachePages).sqlite").path,
                                cachePragma: cachePages)
        }
    }

    private func driveRandomKeys(path: String, cachePragma: Int) throws {
        _ = SQLitePageCache.installIfNeeded()
        let parkedBefore = SQLitePageCache.parkedRekeys
        var rng = SplitMix64(seed: UInt64(bitPattern: Int64(cachePragma)))
        let writer = try SQLiteConnection(path: path)
        try writer.execute("PRAGMA page_size = 4096")
        XCTAssertEqual(try writer.scalarText("PRAGMA journal_mode = WAL"), "wal")
        try writer.execute("PRAGMA cache_size = \(cachePragma)")
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.executeScript("CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT NOT NULL UNIQUE, v BLOB NOT NULL)")
        let reader = try SQLiteConnection(path: path)

        var committed: [String: Int] = [:]  // key -> value length
        for round in 0..<120 {
            try writer.execute("BEGIN IMMEDIATE")
            var added: [String: Int] = [:]
            var removed: Set<String> = []
            for _ in 0..<200 {
                let key = rng.hexKey()
                let length = 40 + Int(rng.next() % 200)
                try writer.with("INSERT INTO t (k, v) VALUES (?, zeroblob(?))") { statement in
                    try statement.bind(1, key)
                    try statement.bind(2, Int64(length))
                    try statement.run()
                }
                added[key] = length
            }
            if round % 3 == 2 {
                // Delete 5 % of the committed keys (underfull leaves merge with siblings).
                for key in committed.keys.shuffled(using: &rng).prefix(committed.count / 20) {
                    try writer.with("DELETE FROM t WHERE k = ?") { statement in
                        try statement.bind(1, key)
                        try statement.run()
                    }
                    removed.insert(key)
                }
            }
            if round % 7 == 6 {
                try writer.execute("ROLLBACK")
            } else {
                try writer.execute("COMMIT")
                committed.merge(added) { _, new in new }
                for key in removed { committed[key] = nil }
            }
            if round % 10 == 9 {
                XCTAssertEqual(try reader.scalarInt("SELECT count(*) FROM t"), Int64(committed.count))
            }
        }
        XCTAssertGreaterThan(SQLitePageCache.parkedRekeys, parkedBefore,
                             "the workload must make balance_nonroot swap pages through the wrapper")
        try assertHolds(committed, connection: writer)
        try assertHolds(committed, connection: reader)
        XCTAssertNotNil(try writer.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)"))
        writer.close()
        reader.close()
        let reopened = try SQLiteConnection(path: path)
        try assertHolds(committed, connection: reopened)
        reopened.close()
    }

    private func assertHolds(_ rows: [String: Int], connection: SQLiteConnection,
                             file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try connection.scalarText("PRAGMA integrity_check"), "ok", file: file, line: line)
        XCTAssertEqual(try connection.scalarInt("SELECT count(*) FROM t"), Int64(rows.count), file: file, line: line)
        let stored = try connection.with("SELECT k, length(v) FROM t ORDER BY k") { statement in
            var pairs: [(String, Int)] = []
            while try statement.step() { pairs.append((statement.string(0), Int(statement.int64(1)))) }
            return pairs
        }
        let expected = rows.sorted { $0.key < $1.key }
        XCTAssertEqual(stored.map(\.0), expected.map(\.key), file: file, line: line)
        XCTAssertEqual(stored.map(\.1), expected.map(\.value), file: file, line: line)
    }
}

/// Seeded generator (SplitMix64, https://prng.di.unimi.it/splitmix64.c): the same keys every run.
private struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// 32 hex digits, like an eventID's randomness.
    mutating func hexKey() -> String {
        String(next(), radix: 16) + String(next(), radix: 16)
    }
}
