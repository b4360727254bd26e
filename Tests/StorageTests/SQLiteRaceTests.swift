import Foundation
import XCTest
@testable import Storage

/// Two connections (two `SQLiteCallStore` instances on one file, as two processes would have)
/// racing on the same revision: the conditional write must let exactly one through.
final class SQLiteRaceTests: StorageTestCase {
    /// Thread-safe collector of per-thread outcomes.
    private final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String: Result<[OutboxEntry], StorageError>] = [:]
        func record(_ name: String, _ result: Result<[OutboxEntry], StorageError>) {
            lock.lock(); defer { lock.unlock() }
            values[name] = result
        }
        var all: [String: Result<[OutboxEntry], StorageError>] {
            lock.lock(); defer { lock.unlock() }
            return values
        }
    }

    /// Runs each (store, step) on its own thread, released together, and waits for all.
    private func race(_ contenders: [(name: String, store: SQLiteCallStore, step: StepCommit)]) -> [String: Result<[OutboxEntry], StorageError>] {
        let outcomes = Outcomes()
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for contender in contenders {
            done.enter()
            let (name, store, step) = contender
            let thread = Thread {
                ready.signal()
                go.wait()
                do {
                    outcomes.record(name, .success(try store.commit(step)))
                } catch let error as StorageError {
                    outcomes.record(name, .failure(error))
                } catch {
                    outcomes.record(name, .failure(.corrupt("unexpected \(error)")))
                }
                done.leave()
            }
            thread.start()
        }
        for _ in contenders { ready.wait() }
        for _ in contenders { go.signal() }
        done.wait()
        return outcomes.all
    }

    private func failure(_ outcome: Result<[OutboxEntry], StorageError>?) -> StorageError? {
        guard case .failure(let error)? = outcome else { return nil }
        return error
    }

    func testTwoConnectionsRaceSameRevisionExactlyOneWins() throws {
        let first = try openStore()
        let second = try openStore()
        for round in 0..<50 {
            let id = "race-\(round)"
            try insert(id, into: first)
            func step(_ who: String) -> StepCommit {
                StepCommit(
                    callID: id, expectedRevision: 1, call: call(id, revision: 2, state: "{\"answeredBy\":\"\(who)\"}"),
                    processedEvent: event("answer-\(round)", device: who),
                    outbox: [(bobPhone, Data("answered by \(who)".utf8))],
                    setDeadlines: [Deadline(callID: id, kind: "media-\(who)", dueAt: 1)], now: Int64(round))
            }
            let outcomes = race([("A", first, step("A")), ("B", second, step("B"))])

            let winners = outcomes.filter { if case .success = $0.value { return true } else { return false } }
            XCTAssertEqual(winners.count, 1, "round \(round): \(outcomes)")
            guard let winner = winners.keys.first else { continue }
            let loser = winner == "A" ? "B" : "A"
            XCTAssertEqual(failure(outcomes[loser]), .revisionConflict(current: 2), "round \(round)")

            // Both connections see the winner's state, and nothing of the loser.
            for store in [first, second] {
                XCTAssertEqual(try store.loadCall(id)?.state, Data("{\"answeredBy\":\"\(winner)\"}".utf8))
                XCTAssertNotNil(try store.processedEvent(account: "alice", device: winner, eventID: "answer-\(round)"))
                XCTAssertNil(try store.processedEvent(account: "alice", device: loser, eventID: "answer-\(round)"))
                XCTAssertEqual(try store.lastSeq(for: bobPhone), Int64(round + 1))
                let entries = try store.outbox(for: bobPhone, after: Int64(round), limit: 10)
                XCTAssertEqual(entries.map(\.payload), [Data("answered by \(winner)".utf8)])
                XCTAssertEqual(try store.allDeadlines().filter { $0.callID == id }.map(\.kind), ["media-\(winner)"])
            }
        }
    }

    func testTwoConnectionsRaceInsertExactlyOneWins() throws {
        let first = try openStore()
        let second = try openStore()
        for round in 0..<50 {
            let id = "new-\(round)"
            let outcomes = race([
                ("A", first, StepCommit(callID: id, expectedRevision: nil, call: call(id, revision: 1, state: "\"A\""), now: 0)),
                ("B", second, StepCommit(callID: id, expectedRevision: nil, call: call(id, revision: 1, state: "\"B\""), now: 0)),
            ])
            let winners = outcomes.filter { if case .success = $0.value { return true } else { return false } }.map(\.key)
            XCTAssertEqual(winners.count, 1, "round \(round): \(outcomes)")
            let loser = winners.first == "A" ? "B" : "A"
            XCTAssertEqual(failure(outcomes[loser]), .revisionConflict(current: 1), "round \(round)")
            XCTAssertEqual(try second.loadCall(id)?.state, winners.first.map { Data("\"\($0)\"".utf8) })
        }
    }

    func testOneStoreUsedFromManyThreadsKeepsSeqsDense() throws {
        let store = try openStore()
        let perThread = 50
        let contenders = (0..<4).map { index in
            (name: "t\(index)", store: store, step: StepCommit(callID: "x", expectedRevision: nil, now: 0))
        }
        // Each thread commits many outbox appends through the same instance.
        let done = DispatchGroup()
        for contender in contenders {
            done.enter()
            Thread {
                for _ in 0..<perThread {
                    var step = contender.step
                    step.outbox = [(StoredDeviceKey(account: "alice", device: "phone"), Data(contender.name.utf8))]
                    _ = try? store.commit(step)
                }
                done.leave()
            }.start()
        }
        done.wait()
        let entries = try store.outbox(for: alicePhone, after: 0, limit: 1_000)
        XCTAssertEqual(entries.map(\.seq), (1...Int64(4 * perThread)).map { $0 })
    }
}
