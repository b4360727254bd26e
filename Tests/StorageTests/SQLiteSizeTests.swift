import Foundation
import XCTest
@testable import Storage

/// `SQLiteCallStore.bytesInUse()`: the pages that hold data, committed ones in the WAL
/// included, freed pages not.
final class SQLiteSizeTests: StorageTestCase {
    func testBytesInUseFollowsWhatIsStoredAndFreed() throws {
        let store = try openStore()
        let empty = try store.bytesInUse()
        XCTAssertGreaterThan(empty, 0, "the schema's pages")
        for index in 0..<50 {
            var stored = call("call-\(index)", revision: 1)
            stored.descriptions = Data(repeating: UInt8(index), count: 8_000)
            try store.commit(StepCommit(callID: stored.callID, expectedRevision: nil, call: stored, now: 1_000))
        }
        let full = try store.bytesInUse()
        XCTAssertGreaterThanOrEqual(full - empty, 50 * 8_000, "committed pages count before any checkpoint")
        // The same figure from another connection (pages in the WAL, as a reader sees them).
        let reader = try SQLiteConnection(path: databasePath)
        defer { reader.close() }
        let pageCount = try XCTUnwrap(reader.scalarInt("PRAGMA page_count"))
        let freePages = try XCTUnwrap(reader.scalarInt("PRAGMA freelist_count"))
        let pageSize = try XCTUnwrap(reader.scalarInt("PRAGMA page_size"))
        XCTAssertEqual((pageCount - freePages) * pageSize, full)

        for index in 0..<50 {
            var ended = call("call-\(index)", revision: 2, terminal: true)
            ended.descriptions = Data()
            try store.commit(StepCommit(callID: ended.callID, expectedRevision: 1, call: ended, now: 1_001, descriptionsChanged: true))
        }
        let afterDelete = try store.bytesInUse()
        XCTAssertLessThan(afterDelete, full - 40 * 8_000, "freed overflow pages are on the freelist, not in use")
    }
}
