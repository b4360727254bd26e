import XCTest
@testable import Server

final class BatchCutTests: XCTestCase {
    func testABatchAlwaysTakesItsFirstFrame() {
        let cut = BatchCut(budgetMicroseconds: 2_000, maxFrames: 256)
        // However long ago the work started, an empty batch is not full.
        XCTAssertFalse(cut.isFull(frames: 0, startedAt: 0, now: 1_000_000))
        XCTAssertTrue(cut.isFull(frames: 1, startedAt: 0, now: 1_000_000))
    }

    func testCutAfterTheBudgetOfElapsedWork() {
        let cut = BatchCut(budgetMicroseconds: 2_000, maxFrames: 256)
        XCTAssertFalse(cut.isFull(frames: 5, startedAt: 10_000, now: 11_999))
        XCTAssertTrue(cut.isFull(frames: 5, startedAt: 10_000, now: 12_000))
        XCTAssertTrue(cut.isFull(frames: 2, startedAt: 10_000, now: 15_000))
    }

    func testCutAtTheFrameCountEvenWithinTheBudget() {
        let cut = BatchCut(budgetMicroseconds: 2_000, maxFrames: 4)
        XCTAssertFalse(cut.isFull(frames: 3, startedAt: 0, now: 10))
        XCTAssertTrue(cut.isFull(frames: 4, startedAt: 0, now: 10))
    }

    func testDefaults() {
        let cut = BatchCut()
        XCTAssertEqual(cut.budgetMicroseconds, 5_000)
        XCTAssertEqual(cut.maxFrames, 256)
    }
}
