import Foundation
import XCTest
@testable import Storage

/// Base class: a fresh temporary directory per test and builders for commits.
class StorageTestCase: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("switchboard-storage-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    var databasePath: String { directory.appendingPathComponent("calls.sqlite").path }

    func openStore(_ path: String? = nil, synchronous: SynchronousMode = .normal) throws -> SQLiteCallStore {
        try SQLiteCallStore(path: path ?? databasePath, synchronous: synchronous)
    }

    func call(
        _ id: String, revision: Int64, state: String = "{}", terminal: Bool = false,
        participants: [String] = ["alice", "bob"], at time: Int64 = 1_000
    ) -> StoredCall {
        StoredCall(
            callID: id, revision: revision, state: Data(state.utf8), isTerminal: terminal,
            participants: participants, createdAt: 1_000, updatedAt: time)
    }

    func event(_ id: String, account: String = "alice", device: String = "phone", at time: Int64 = 1_000) -> ProcessedEvent {
        ProcessedEvent(
            account: account, device: device, eventID: id, payloadHash: "hash-\(id)",
            result: Data("{\"ok\":\"\(id)\"}".utf8), processedAt: time)
    }

    let alicePhone = StoredDeviceKey(account: "alice", device: "phone")
    let aliceLaptop = StoredDeviceKey(account: "alice", device: "laptop")
    let bobPhone = StoredDeviceKey(account: "bob", device: "phone")

    /// Inserts `id` at revision 1.
    @discardableResult
    func insert(_ id: String, into store: SQLiteCallStore, participants: [String] = ["alice", "bob"]) throws -> StoredCall {
        let stored = call(id, revision: 1, participants: participants)
        try store.commit(StepCommit(callID: id, expectedRevision: nil, call: stored, now: 1_000))
        return stored
    }

    /// Asserts that `body` throws exactly `expected`.
    func assertThrows<T>(
        _ expected: StorageError, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> T
    ) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual(error as? StorageError, expected, file: file, line: line)
        }
    }
}
