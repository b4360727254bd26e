import Foundation
import XCTest
@testable import Storage

/// Every statement the store runs, checked with EXPLAIN QUERY PLAN
/// (https://sqlite.org/eqp.html): none reads a whole table except the ones listed with a
/// reason, and every secondary index is used by some statement (an index nothing reads
/// only costs a B-tree write per insert on the hot path).
final class SQLiteQueryPlanTests: StorageTestCase {
    /// Full scans allowed, with why.
    private let allowedScans: [String: String] = [
        // Rebuilding the in-memory outbox index (at open, or after another connection
        // committed): the log holds only unacknowledged entries, and the cursors one row
        // per device.
        "SCAN outbox_log": "outbox index rebuild",
        "SCAN outbox_cursors": "outbox index rebuild",
        // purge: the oldest `limit` processed events in rowid order (`head`), of which it
        // deletes those before the first one within retention: it reads at most `limit`
        // rows (testAnEventChunkReadsOnlyItsLimitWhateverTheBacklog).
        "SCAN processed_events": "purge from the oldest record",
        "SCAN head": "purge from the oldest record",
    ]

    /// Runs every public operation once so that each statement gets prepared.
    private func exercise(_ store: SQLiteCallStore) throws {
        try store.registerDevice(alicePhone, now: 1)
        _ = try store.devices(of: "alice")
        var stored = call("c1", revision: 1)
        stored.descriptions = Data("v=0".utf8)
        try store.commit(StepCommit(callID: "c1", expectedRevision: nil, call: stored, processedEvent: event("e1"),
                                    outbox: [(bobPhone, Data("a".utf8)), (aliceLaptop, Data("b".utf8))],
                                    setDeadlines: [Deadline(callID: "c1", kind: "ring", dueAt: 5)], now: 1))
        try store.batch {
            try store.commit(StepCommit(callID: "c1", expectedRevision: 1, call: call("c1", revision: 2, participants: ["alice", "carol"]),
                                        processedEvent: event("e2"), outbox: [(bobPhone, Data("c".utf8))],
                                        cancelDeadlines: [(callID: "c1", kind: "ring")], now: 2))
            try store.commit(StepCommit(callID: "c1", expectedRevision: 2, call: call("c1", revision: 3, terminal: true, participants: ["alice", "carol"]),
                                        now: 3))
            try store.commit(StepCommit(callID: "c1", expectedRevision: 3, now: 4))
        }
        let shared = Data(String(repeating: "x", count: 2_000).utf8)
        try store.commit(StepCommit(callID: "c3", expectedRevision: nil,
                                    outbox: [(bobPhone, shared), (aliceLaptop, shared)], now: 5))
        _ = try store.loadCall("c1")
        _ = try store.activeCalls(involving: "alice")
        _ = try store.processedEvent(account: "alice", device: "phone", eventID: "e1")
        _ = try store.outbox(for: bobPhone, after: 0, limit: 10)
        _ = try store.lastSeq(for: bobPhone)
        try store.acknowledge(device: bobPhone, upTo: 1)
        _ = try store.dueDeadlines(atOrBefore: 10, limit: 10)
        _ = try store.nextDeadline()
        _ = try store.allDeadlines()
        _ = try store.purge(terminalCallsUpdatedBefore: 100, eventsProcessedBefore: 100)
        XCTAssertThrowsError(try store.commit(StepCommit(callID: "c2", expectedRevision: 9, call: call("c2", revision: 10), now: 5)))
    }

    func testNoStatementScansAHotTableAndEveryIndexIsUsed() throws {
        let store = try openStore()
        try exercise(store)
        let statements = try store.locked { $0.preparedSQL }
        let inspector = try SQLiteConnection(path: databasePath)
        defer { inspector.close() }
        var usedIndexes = Set<String>()
        var plans: [String] = []
        for sql in statements {
            let head = sql.prefix(12).uppercased()
            if ["BEGIN", "COMMIT", "SAVEPOINT", "RELEASE", "PRAGMA", "ROLLBACK"].contains(where: { head.hasPrefix($0) }) { continue }
            let details = try inspector.with("EXPLAIN QUERY PLAN " + sql) { statement -> [String] in
                var rows: [String] = []
                while try statement.step() { rows.append(statement.string(3)) }
                return rows
            }
            plans.append(sql.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
                         + "\n    " + details.joined(separator: "\n    "))
            for detail in details {
                if let range = detail.range(of: "INDEX ") {
                    let name = detail[range.upperBound...].prefix { $0 != " " }
                    usedIndexes.insert(String(name))
                }
                if detail.hasPrefix("SCAN "), !detail.contains("INDEX"), !detail.contains("CONSTANT ROW") {
                    let table = detail.split(separator: " ").prefix(2).joined(separator: " ")
                    XCTAssertNotNil(allowedScans[table], "full scan: \(detail)\nin: \(sql)")
                }
            }
        }
        print("query plans of \(plans.count) statements:\n" + plans.joined(separator: "\n"))
        let indexes = try inspector.with("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name") { statement -> [String] in
            var names: [String] = []
            while try statement.step() { names.append(statement.string(0)) }
            return names
        }
        XCTAssertFalse(indexes.isEmpty)
        for index in indexes {
            XCTAssertTrue(usedIndexes.contains(index), "secondary index \(index) is used by no statement")
        }
    }
}
