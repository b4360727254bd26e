import Foundation
import XCTest
@testable import Storage

/// `PRAGMA secure_delete = FAST` (see `SQLiteCallStore.init`): a page freed by a commit (the
/// overflow chain of deleted descriptions, of an acknowledged outbox row) is not written to
/// the WAL; deleted content inside the B-tree pages the commit writes anyway is still zeroed.
/// Debian's SQLite defaults to ON, which writes every freed page as zeros.
final class SQLiteSecureDeleteTests: StorageTestCase {
    /// The pages of the freed overflow chain that the deleting commit wrote to the WAL.
    private func freedPagesWritten(secureDelete: String?) throws -> (chain: Set<UInt32>, written: Set<UInt32>, remaining: Data) {
        let path = directory.appendingPathComponent("sd-\(secureDelete ?? "default").sqlite").path
        let store = try SQLiteCallStore(path: path, backgroundCheckpoints: false)
        defer { store.close() }
        if let secureDelete { try store.locked { try $0.execute("PRAGMA secure_delete = \(secureDelete)") } }
        // A freelist with a trunk page and 4 leaves: a 24 KB body (an overflow chain of 5
        // pages; the descriptions are a rowid table since schema 8) written and deleted. A freed page is written whatever the setting when it
        // must become a new trunk page; here each freed page has room in the trunk.
        var earlier = call("c0", revision: 1)
        earlier.descriptions = Data(repeating: 0x62, count: 24_000)
        try store.commit(StepCommit(callID: "c0", expectedRevision: nil, call: earlier, now: 1))
        var earlierEnded = call("c0", revision: 2, terminal: true)
        earlierEnded.descriptions = Data()
        try store.commit(StepCommit(callID: "c0", expectedRevision: 1, call: earlierEnded, now: 1))
        // A 12 KB body: a cell in the descriptions leaf (~3.8 KB of it local) and an
        // overflow chain of 2 pages, taken from the freelist's leaves.
        var first = call("c1", revision: 1)
        first.descriptions = Data((0 ..< 12_000).map { UInt8(0x61 + $0 % 26) })
        try store.commit(StepCommit(callID: "c1", expectedRevision: nil, call: first, now: 1))
        let chain = Set(try SQLitePagesPerStepTests.pageOwners(store).filter { $0.value == "call_descriptions (overflow)" }.keys)
        var reader = WALFrameReader(path: path + "-wal")
        var ended = call("c1", revision: 2, terminal: true)
        ended.descriptions = Data()
        try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: ended, now: 2))
        let written = Set(try reader.newFrames().map(\.page))
        // The row is gone whatever the setting.
        let remaining = try XCTUnwrap(try store.loadCall("c1")).descriptions
        return (chain, written, remaining)
    }

    func testFreedOverflowPagesAreNotWrittenToTheWAL() throws {
        let store = try openStore()
        XCTAssertEqual(try store.locked { try $0.scalarInt("PRAGMA secure_delete") }, 2, "FAST")
        store.close()
        let fast = try freedPagesWritten(secureDelete: nil)
        XCTAssertEqual(fast.chain.count, 2)
        XCTAssertTrue(fast.chain.isDisjoint(with: fast.written), "freed pages written: \(fast.chain.intersection(fast.written).sorted())")
        XCTAssertEqual(fast.remaining, Data())
        // Control: with SQLite's compiled-in default (ON) the same commit writes the freed
        // pages (zeroed), so the check above can see them.
        let on = try freedPagesWritten(secureDelete: "ON")
        XCTAssertEqual(on.chain.count, 2)
        XCTAssertFalse(on.chain.isDisjoint(with: on.written))
        XCTAssertEqual(on.remaining, Data())
    }
}
