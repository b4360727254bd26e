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

    func testBatchCutReadsTheCPUClockOnlyOnceTheWallTimeCouldHaveUsedTheBudget() {
        let cut = BatchCut(budgetMicroseconds: 2_000, maxFrames: 4)
        XCTAssertFalse(cut.mayBeFull(frames: 0, wallElapsed: 1_000_000))
        XCTAssertFalse(cut.mayBeFull(frames: 3, wallElapsed: 1_999))
        XCTAssertTrue(cut.mayBeFull(frames: 3, wallElapsed: 2_000))
        XCTAssertTrue(cut.mayBeFull(frames: 4, wallElapsed: 0))
        // Whenever isFull could be true (CPU elapsed ≤ wall elapsed), mayBeFull is.
        for frames in 0 ..< 6 {
            for wall in stride(from: Int64(0), through: 3_000, by: 250) {
                for cpu in stride(from: Int64(0), through: wall, by: 250) where cut.isFull(frames: frames, startedAt: 0, now: cpu) {
                    XCTAssertTrue(cut.mayBeFull(frames: frames, wallElapsed: wall), "\(frames) \(wall) \(cpu)")
                }
            }
        }
    }
}
