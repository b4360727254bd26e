import CSQLite
import Foundation
import XCTest
@testable import Storage

/// Retention of tombstones, idempotency records, and acknowledged outbox entries.
final class SQLitePurgeTests: StorageTestCase {
    func testPurgeRetention() throws {
        let store = try openStore()
        // old terminal (purged), recent terminal (kept), old active (kept).
        try insert("old-ended", into: store)
        try store.commit(StepCommit(
            callID: "old-ended", expectedRevision: 1, call: call("old-ended", revision: 2, terminal: true, at: 100),
            setDeadlines: [Deadline(callID: "old-ended", kind: "cleanup", dueAt: 5)], now: 100))
        try insert("new-ended", into: store)
        try store.commit(StepCommit(
            callID: "new-ended", expectedRevision: 1, call: call("new-ended", revision: 2, terminal: true, at: 900), now: 900))
        try store.commit(StepCommit(
            callID: "old-active", expectedRevision: nil, call: call("old-active", revision: 1, at: 50),
            setDeadlines: [Deadline(callID: "old-active", kind: "ring", dueAt: 7)], now: 50))
        // Events at 100 and 900.
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("e-old", at: 100), now: 100))
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("e-new", at: 900), now: 900))
        // Outbox: 3 entries, 2 acknowledged (already trimmed eagerly), 1 pending.
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, outbox: [
            (alicePhone, Data("1".utf8)), (alicePhone, Data("2".utf8)), (alicePhone, Data("3".utf8)),
        ], now: 0))
        try store.acknowledge(device: alicePhone, upTo: 2)

        let counts = try store.purge(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500)
        XCTAssertEqual(counts, PurgeCounts(calls: 1, events: 1, outboxEntries: 0))

        XCTAssertNil(try store.loadCall("old-ended"))
        XCTAssertNotNil(try store.loadCall("new-ended"))
        XCTAssertNotNil(try store.loadCall("old-active"))
        XCTAssertNil(try store.processedEvent(account: "alice", device: "phone", eventID: "e-old"))
        XCTAssertNotNil(try store.processedEvent(account: "alice", device: "phone", eventID: "e-new"))
        XCTAssertEqual(try store.allDeadlines(), [Deadline(callID: "old-active", kind: "ring", dueAt: 7)])
        XCTAssertEqual(try store.outbox(for: alicePhone, after: 0, limit: 10).map(\.seq), [3])
        XCTAssertEqual(try store.lastSeq(for: alicePhone), 3)

        // Participants of the purged call went with it (cascade), and the ID can be reused.
        try insert("old-ended", into: store, participants: ["zed"])
        XCTAssertEqual(try store.loadCall("old-ended")?.participants, ["zed"])

        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500), PurgeCounts())
    }

    /// A log row whose entries are all acknowledged but which is still there (e.g. the
    /// cursor was advanced by another writer, or a migrated row): purge deletes it.
    func testPurgeRemovesAcknowledgedEntriesLeftBehind() throws {
        let store = try openStore()
        try store.commit(StepCommit(callID: "x", expectedRevision: nil,
                                    outbox: [(bobPhone, Data("1".utf8)), (bobPhone, Data("2".utf8))], now: 0))
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, outbox: [(bobPhone, Data("3".utf8))], now: 0))
        // Another connection advances the cursor without deleting anything.
        let other = try SQLiteConnection(path: databasePath)
        try other.executeScript("INSERT INTO outbox_cursors (account, device, last_seq, acked_seq) VALUES ('bob', 'phone', 0, 2)")
        other.close()
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [3])
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0).outboxEntries, 1)
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [3])
        XCTAssertEqual(try store.lastSeq(for: bobPhone), 3)
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0).outboxEntries, 0)
    }

    /// ~3 KB: a payload sent to several devices, stored once in its step's log row.
    private func shared(_ tag: String) -> Data {
        Data((tag + String(repeating: "a=candidate:1 1 udp 2122260223 192.0.2.1 54400 typ host\r\n", count: 50)).utf8)
    }

    /// Purging in chunks of 2 rows: after every chunk each unacknowledged entry still reads
    /// its own payload, live and recent calls and recent events are all there; at
    /// the end exactly what is past retention or acknowledged is gone.
    func testChunkedPurgeKeepsEveryRowUntilAcknowledgedOrExpired() throws {
        let store = try openStore()
        let bobLaptop = StoredDeviceKey(account: "bob", device: "laptop")
        // 5 old tombstones with a deadline each, 1 recent tombstone, 1 old live call.
        for i in 0 ..< 5 {
            try insert("old-\(i)", into: store)
            try store.commit(StepCommit(callID: "old-\(i)", expectedRevision: 1,
                                        call: call("old-\(i)", revision: 2, terminal: true, at: 100 + Int64(i)),
                                        setDeadlines: [Deadline(callID: "old-\(i)", kind: "cleanup", dueAt: 5)], now: 100))
        }
        try insert("recent", into: store)
        try store.commit(StepCommit(callID: "recent", expectedRevision: 1,
                                    call: call("recent", revision: 2, terminal: true, at: 900), now: 900))
        try store.commit(StepCommit(callID: "live", expectedRevision: nil, call: call("live", revision: 1, at: 50),
                                    setDeadlines: [Deadline(callID: "live", kind: "ring", dueAt: 7)], now: 50))
        // 5 old events, 1 recent.
        for i in 0 ..< 5 {
            try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("e-\(i)", at: 100), now: 100))
        }
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("e-new", at: 900), now: 900))
        // 6 steps, each with one payload for bob's phone and laptop (seqs 1…6 on both, one log
        // row per step). Another connection moves the cursors without deleting anything (as
        // `testPurgeRemovesAcknowledgedEntriesLeftBehind`): the phone has acknowledged all 6,
        // the laptop 1…3, so rows 1…3 are left behind fully acknowledged and 4…6 are still
        // the laptop's.
        for i in 1 ... 6 {
            try store.commit(StepCommit(callID: "p", expectedRevision: nil,
                                        outbox: [(bobPhone, shared("p\(i)")), (bobLaptop, shared("p\(i)"))], now: 1))
        }
        let other = try SQLiteConnection(path: databasePath)
        try other.executeScript("""
            INSERT INTO outbox_cursors (account, device, last_seq, acked_seq) VALUES ('bob', 'phone', 0, 6), ('bob', 'laptop', 0, 3)
            ON CONFLICT (account, device) DO UPDATE SET acked_seq = excluded.acked_seq
            """)
        other.close()
        let pending = try store.outbox(for: bobLaptop, after: 0, limit: 10)
        XCTAssertEqual(pending.map(\.payload), (4 ... 6).map { shared("p\($0)") })

        var total = PurgeCounts()
        var chunks = 0
        while true {
            let chunk = try store.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 2)
            chunks += 1
            XCTAssertLessThanOrEqual(chunk.calls, 2)
            XCTAssertLessThanOrEqual(chunk.outboxEntries, 2)
            total.add(chunk)
            // Nothing unacknowledged or unexpired is touched, whatever chunk we are at.
            XCTAssertEqual(try store.outbox(for: bobLaptop, after: 0, limit: 10), pending)
            XCTAssertNotNil(try store.loadCall("recent"))
            XCTAssertNotNil(try store.loadCall("live"))
            XCTAssertNotNil(try store.processedEvent(account: "alice", device: "phone", eventID: "e-new"))
            XCTAssertTrue(try store.allDeadlines().contains(Deadline(callID: "live", kind: "ring", dueAt: 7)))
            if !chunk.mayHaveMore(limit: 2) { break }
            XCTAssertLessThan(chunks, 20, "the purge does not end")
        }
        XCTAssertEqual(total, PurgeCounts(calls: 5, events: 5, outboxEntries: 3))
        XCTAssertGreaterThanOrEqual(chunks, 3)
        for i in 0 ..< 5 { XCTAssertNil(try store.loadCall("old-\(i)")) }
        XCTAssertNil(try store.processedEvent(account: "alice", device: "phone", eventID: "e-0"))
        XCTAssertEqual(try store.allDeadlines(), [Deadline(callID: "live", kind: "ring", dueAt: 7)])
        // Nothing left: a full purge now finds nothing either.
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500), PurgeCounts())
        // The laptop acknowledges the rest through the store, which leaves the 3 emptied rows
        // for a group deletion (`acknowledgedRowsPerDeletion`); the purge takes them, and
        // then nothing is left.
        try store.acknowledge(device: bobLaptop, upTo: 6)
        XCTAssertEqual(try store.outbox(for: bobLaptop, after: 0, limit: 10), [])
        XCTAssertEqual(try store.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 10),
                       PurgeCounts(calls: 0, events: 0, outboxEntries: 3))
        XCTAssertEqual(try store.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 10), PurgeCounts())
    }

    func testPurgeChunkRefusesALimitBelowOne() throws {
        let store = try openStore()
        assertThrows(.invalidCommit("purge chunk limit 0 is below 1")) {
            try store.purgeChunk(terminalCallsUpdatedBefore: 0, eventsProcessedBefore: 0, limit: 0)
        }
    }

    /// The one-transaction purge goes on chunk after chunk: more rows than one chunk holds
    /// all go in one call.
    func testFullPurgeTakesMoreThanOneChunk() throws {
        let store = try openStore()
        let count = SQLiteCallStore.purgeChunkRows + 3
        try store.batch {
            for i in 0 ..< count {
                try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("e-\(i)", at: 100), now: 100))
            }
        }
        XCTAssertEqual(try store.purge(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500).events, count)
        XCTAssertNil(try store.processedEvent(account: "alice", device: "phone", eventID: "e-\(count - 1)"))
    }

    /// Inside a batch the chunk's deletions commit with the batch's steps, in one transaction.
    func testAChunkInsideABatchCommitsWithTheBatch() throws {
        let store = try openStore()
        for i in 0 ..< 4 {
            try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("old-\(i)", at: 100), now: 100))
        }
        var counts = PurgeCounts()
        try store.batch {
            try store.commit(StepCommit(callID: "c0", expectedRevision: nil, call: call("c0", revision: 1),
                                        processedEvent: event("new-0", at: 900), outbox: [(bobPhone, Data("a".utf8))], now: 900))
            counts = try store.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 3)
        }
        XCTAssertEqual(counts, PurgeCounts(calls: 0, events: 3, outboxEntries: 0))
        let reopened = try openStore()
        XCTAssertNil(try reopened.processedEvent(account: "alice", device: "phone", eventID: "old-2"))
        XCTAssertNotNil(try reopened.processedEvent(account: "alice", device: "phone", eventID: "old-3"))
        XCTAssertNotNil(try reopened.processedEvent(account: "alice", device: "phone", eventID: "new-0"))
        XCTAssertEqual(try reopened.loadCall("c0")?.revision, 1)
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10).map(\.payload), [Data("a".utf8)])
    }

    /// A chunk that fails inside a batch (a trigger stands in for an I/O error on a delete)
    /// undoes only its own deletions: the batch's steps before and after it still commit, the
    /// outbox seqs stay dense, and the expired rows are still there for a later chunk.
    func testAChunkThatFailsInsideABatchUndoesOnlyItself() throws {
        let store = try openStore()
        for i in 0 ..< 3 {
            try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("old-\(i)", at: 100), now: 100))
        }
        // A fully acknowledged log row left behind, so the chunk also changes the outbox index
        // (and must drop it when rolled back).
        try store.commit(StepCommit(callID: "x", expectedRevision: nil, outbox: [(bobPhone, Data("1".utf8))], now: 0))
        let other = try SQLiteConnection(path: databasePath)
        try other.executeScript("INSERT INTO outbox_cursors (account, device, last_seq, acked_seq) VALUES ('bob', 'phone', 0, 1)")
        try other.executeScript("""
            CREATE TRIGGER failing_delete BEFORE DELETE ON processed_events WHEN OLD.event_id = 'old-1'
            BEGIN SELECT RAISE(ABORT, 'io error'); END;
            """)
        try store.batch {
            try store.commit(StepCommit(callID: "c0", expectedRevision: nil, call: call("c0", revision: 1),
                                        processedEvent: event("new-0", at: 900), outbox: [(bobPhone, Data("2".utf8))], now: 900))
            XCTAssertThrowsError(try store.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 10))
            try store.commit(StepCommit(callID: "c1", expectedRevision: nil, call: call("c1", revision: 1),
                                        processedEvent: event("new-1", at: 900), outbox: [(bobPhone, Data("3".utf8))], now: 900))
        }
        try other.executeScript("DROP TRIGGER failing_delete")
        other.close()
        let reopened = try openStore()
        for id in ["old-0", "old-1", "old-2", "new-0", "new-1"] {
            XCTAssertNotNil(try reopened.processedEvent(account: "alice", device: "phone", eventID: id), id)
        }
        XCTAssertEqual(try reopened.loadCall("c1")?.revision, 1)
        XCTAssertEqual(try reopened.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [2, 3])
        XCTAssertEqual(try store.outbox(for: bobPhone, after: 0, limit: 10).map(\.seq), [2, 3])
        // A later chunk deletes what the failed one could not.
        XCTAssertEqual(try store.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 10),
                       PurgeCounts(calls: 0, events: 3, outboxEntries: 1))
    }

    /// The processed-event delete reads at most its `limit` rows, however many expired
    /// records wait: the VM steps of a 10-row chunk are the same with 30 and with 3,000
    /// expired records (the statement that looked for the first record within retention
    /// read them all at every chunk). Measured with SQLITE_STMTSTATUS_VM_STEP
    /// (https://sqlite.org/c3ref/c_stmtstatus_counter.html) on the store's own statement.
    func testAnEventChunkReadsOnlyItsLimitWhateverTheBacklog() throws {
        func vmStepsOfOneChunk(backlog: Int) throws -> Int32 {
            let path = directory.appendingPathComponent("backlog-\(backlog).sqlite").path
            let store = try SQLiteCallStore(path: path)
            try store.batch {
                for i in 0 ..< backlog {
                    try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("old-\(i)", at: 100), now: 100))
                }
                try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event("new", at: 900), now: 900))
            }
            store.close()
            let connection = try SQLiteConnection(path: path)
            defer { connection.close() }
            return try connection.with(SQLiteCallStore.expiredEventsDelete) { statement in
                try statement.bind(1, Int64(500))
                try statement.bind(2, Int64(10))
                try statement.run()
                XCTAssertEqual(connection.changes, 10)
                return sqlite3_stmt_status(statement.handle, SQLITE_STMTSTATUS_VM_STEP, 0)
            }
        }
        let short = try vmStepsOfOneChunk(backlog: 30)
        let long = try vmStepsOfOneChunk(backlog: 3_000)
        XCTAssertGreaterThan(short, 0)
        XCTAssertEqual(long, short, "a chunk's work must not grow with the backlog")
    }

    /// The bounded delete keeps the order rule: nothing at or after the first record within
    /// retention goes, even when expired records follow it (a clock step back).
    func testAnEventChunkStopsAtTheFirstRecordWithinRetention() throws {
        let store = try openStore()
        for (id, at) in [("a", 100), ("b", 100), ("keep", 900), ("after-step-back", 100), ("c", 900)] {
            try store.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event(id, at: Int64(at)), now: Int64(at)))
        }
        XCTAssertEqual(try store.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 10).events, 2)
        XCTAssertEqual(try store.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 1).events, 0)
        XCTAssertNotNil(try store.processedEvent(account: "alice", device: "phone", eventID: "after-step-back"))
        // A limit that ends before the first record within retention.
        let other = try openStore(directory.appendingPathComponent("limit.sqlite").path)
        for id in ["a", "b", "c"] {
            try other.commit(StepCommit(callID: "x", expectedRevision: nil, processedEvent: event(id, at: 100), now: 100))
        }
        XCTAssertEqual(try other.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 2).events, 2)
        XCTAssertNotNil(try other.processedEvent(account: "alice", device: "phone", eventID: "c"))
        XCTAssertEqual(try other.purgeChunk(terminalCallsUpdatedBefore: 500, eventsProcessedBefore: 500, limit: 2).events, 1)
    }
}
