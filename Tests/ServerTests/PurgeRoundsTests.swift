import Storage
import XCTest
@testable import Server

final class PurgeRoundsTests: XCTestCase {
    private let full = PurgeCounts(calls: 0, events: 0, outboxEntries: 10)
    private let short = PurgeCounts(calls: 3, events: 9, outboxEntries: 9)

    func testTheFirstTickStartsARound() {
        XCTAssertTrue(PurgeRounds().isDue(now: 0))
        XCTAssertTrue(PurgeRounds().isDue(now: -5))
    }

    func testAFullChunkGoesOnAtTheNextTickUntilAShortOne() {
        var rounds = PurgeRounds(intervalMs: 60_000, chunkRows: 10)
        rounds.ran(full, now: 1_000)
        XCTAssertTrue(rounds.inRound)
        XCTAssertTrue(rounds.isDue(now: 1_200))
        rounds.ran(full, now: 1_200)
        XCTAssertTrue(rounds.isDue(now: 1_400))
        rounds.ran(short, now: 1_400)
        XCTAssertFalse(rounds.inRound)
        // The next round starts one interval after this one started, not after it ended.
        XCTAssertEqual(rounds.nextRoundAtWall, 61_000)
        XCTAssertFalse(rounds.isDue(now: 60_999))
        XCTAssertTrue(rounds.isDue(now: 61_000))
    }

    func testAShortFirstChunkEndsTheRound() {
        var rounds = PurgeRounds(intervalMs: 60_000, chunkRows: 10)
        rounds.ran(PurgeCounts(), now: 5_000)
        XCTAssertFalse(rounds.isDue(now: 5_200))
        XCTAssertEqual(rounds.nextRoundAtWall, 65_000)
    }

    func testAFailureWaitsAnInterval() {
        var rounds = PurgeRounds(intervalMs: 60_000, chunkRows: 10)
        rounds.ran(full, now: 1_000)
        rounds.failed(now: 1_200)
        XCTAssertFalse(rounds.inRound)
        XCTAssertFalse(rounds.isDue(now: 1_400))
        XCTAssertTrue(rounds.isDue(now: 61_200))
    }

    func testBatchesCarryChunksOnlyWhileChunksFindRows() {
        var rounds = PurgeRounds(intervalMs: 60_000, chunkRows: 10)
        XCTAssertNil(rounds.batchLimit(frames: 5), "nothing known to be due before the first chunk")
        rounds.ran(short, now: 1_000)
        XCTAssertFalse(rounds.inRound)
        XCTAssertEqual(rounds.batchLimit(frames: 5), 5 * PurgeRounds.batchRowsPerFrame)
        XCTAssertNil(rounds.batchLimit(frames: 0))
        rounds.ranInBatch(PurgeCounts(calls: 0, events: 1, outboxEntries: 0))
        XCTAssertEqual(rounds.batchLimit(frames: 1), PurgeRounds.batchRowsPerFrame)
        rounds.ranInBatch(PurgeCounts())
        XCTAssertNil(rounds.batchLimit(frames: 5), "a chunk that found nothing ends it until the next round")
        // The batches' chunks do not move the rounds.
        XCTAssertEqual(rounds.nextRoundAtWall, 61_000)
        rounds.ran(PurgeCounts(), now: 61_000)
        XCTAssertNil(rounds.batchLimit(frames: 5))
    }

    func testAFailureStopsTheBatchesChunksToo() {
        var rounds = PurgeRounds(intervalMs: 60_000, chunkRows: 10)
        rounds.ran(full, now: 1_000)
        XCTAssertNotNil(rounds.batchLimit(frames: 5))
        rounds.failed(now: 1_100)
        XCTAssertNil(rounds.batchLimit(frames: 5))
        XCTAssertFalse(rounds.isDue(now: 1_200))
    }
}
