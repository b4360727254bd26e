import CSQLite
import Foundation
import SplitMix
import XCTest
@testable import Storage

/// Text and blob values bound through a statement's ``BindArena`` (`SQLITE_STATIC`): what
/// SQLite stores must be exactly what was bound, whatever the order of sizes, also when a
/// buffer grows between two binds of the same parameter or a value skips the arena.
final class BindArenaTests: StorageTestCase {
    func testCopyKeepsOnlyKnownParametersAndValuesItMayHold() {
        var arena = BindArena(parameters: 2)
        let bytes: [UInt8] = Array("hello".utf8)
        bytes.withUnsafeBytes { raw in
            XCTAssertNil(arena.copy(raw, parameter: 0), "parameters start at 1")
            XCTAssertNil(arena.copy(raw, parameter: 3), "beyond the statement's parameters")
            XCTAssertNotNil(arena.copy(raw, parameter: 1))
            XCTAssertNotNil(arena.copy(raw, parameter: 2))
        }
        [UInt8]().withUnsafeBytes { XCTAssertNil(arena.copy($0, parameter: 1), "an empty value is bound as before") }
        [UInt8](repeating: 7, count: BindArena.largestKept + 1).withUnsafeBytes {
            XCTAssertNil(arena.copy($0, parameter: 1), "an outsized value is bound transient")
        }
    }

    func testCopyHoldsTheBytesAndReusesTheBufferUntilItMustGrow() {
        var arena = BindArena(parameters: 1)
        let short = [UInt8](repeating: 1, count: 10), same = [UInt8](repeating: 2, count: BindArena.smallest)
        let long = [UInt8](repeating: 3, count: BindArena.smallest + 1)
        let first = short.withUnsafeBytes { arena.copy($0, parameter: 1) }
        let second = same.withUnsafeBytes { arena.copy($0, parameter: 1) }
        XCTAssertEqual(first, second, "a value that fits reuses the buffer")
        XCTAssertEqual(Array(UnsafeRawBufferPointer(start: second, count: same.count)), same)
        let third = long.withUnsafeBytes { arena.copy($0, parameter: 1) }
        XCTAssertEqual(Array(UnsafeRawBufferPointer(start: third, count: long.count)), long)
    }

    /// Rows written through one cached statement with texts and blobs of random sizes (1 B to
    /// 20 KB, and now and then over ``BindArena/largestKept``) read back byte for byte.
    func testRowsBoundThroughTheArenaReadBackExactly() throws {
        let connection = try SQLiteConnection(path: databasePath)
        try connection.executeScript("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b BLOB, c TEXT NOT NULL)")
        var random = SplitMix64(seed: 0xB1A5_2026)
        var written: [(String, Data, String)] = []
        for n in 0 ..< 300 {
            func size() -> Int {
                random.next() % 25 == 0 ? BindArena.largestKept + Int(random.next() % 100) : 1 + Int(random.next() % 20_000)
            }
            let a = String(repeating: "é\(n)", count: max(1, size() / 4))
            var b = Data(count: size())
            for i in stride(from: 0, to: b.count, by: 97) { b[i] = UInt8(truncatingIfNeeded: random.next()) }
            let c = n % 7 == 0 ? "" : "event-\(n)-\(random.next())"
            try connection.with("INSERT INTO t (a, b, c) VALUES (?1, ?2, ?3)") { statement in
                try statement.bind(1, a)
                try statement.bind(2, b)
                try statement.bind(3, c)
                try statement.run()
            }
            written.append((a, b, c))
        }
        var read: [(String, Data, String)] = []
        try connection.with("SELECT a, b, c FROM t ORDER BY id") { statement in
            while try statement.step() { read.append((statement.string(0), statement.data(1), statement.string(2))) }
        }
        XCTAssertEqual(read.count, written.count)
        for (index, (row, expected)) in zip(read, written).enumerated() {
            XCTAssertEqual(row.0, expected.0, "text of row \(index)")
            XCTAssertEqual(row.1, expected.1, "blob of row \(index)")
            XCTAssertEqual(row.2, expected.2, "short text of row \(index)")
        }
    }

    /// Rebinding one parameter with a longer value between two steps of the same statement
    /// (its buffer is freed and replaced) leaves the other parameters' values intact.
    func testGrowingOneParameterKeepsTheOthers() throws {
        let connection = try SQLiteConnection(path: databasePath)
        try connection.executeScript("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b TEXT NOT NULL)")
        try connection.with("INSERT INTO t (a, b) VALUES (?1, ?2)") { statement in
            try statement.bind(1, "kept")
            try statement.bind(2, "short")
            try statement.run()
            sqlite3_reset(statement.handle)  // keeps the bindings: the next step reuses ?1
            try statement.bind(2, String(repeating: "x", count: 5_000))
            try statement.run()
        }
        var rows: [String] = []
        try connection.with("SELECT a || ':' || length(b) FROM t ORDER BY id") { statement in
            while try statement.step() { rows.append(statement.string(0)) }
        }
        XCTAssertEqual(rows, ["kept:5", "kept:5000"])
    }
}
