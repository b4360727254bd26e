@testable import Server
import Signaling
import XCTest

final class FrameQueueTests: XCTestCase {
    /// Frames leave in arrival order across many partial takes, including the compactions
    /// (a consumed front of ≥ 64 that is half the storage) and a queue that empties.
    func testTakesFromTheFrontInArrivalOrderAcrossCompactions() {
        var queue = FrameQueue<Int>()
        XCTAssertTrue(queue.isEmpty)
        var next = 0, expected = 0
        for round in 0 ..< 200 {
            for _ in 0 ..< (round % 7 + 20) {
                queue.append(next)
                next += 1
            }
            let take = round % 5 + 17
            let front = Array(queue.prefix(take))
            XCTAssertEqual(front, Array(expected ..< expected + min(take, queue.count)))
            for i in 0 ..< min(take, queue.count) { XCTAssertEqual(queue[i], expected + i) }
            queue.removeFirst(take)
            expected += front.count
            XCTAssertEqual(queue.count, next - expected)
        }
        XCTAssertEqual(Array(queue.prefix(queue.count)), Array(expected ..< next))
        queue.removeFirst(queue.count + 10)
        XCTAssertTrue(queue.isEmpty)
        XCTAssertEqual(queue.count, 0)
        queue.append(7)
        XCTAssertEqual(queue[0], 7)
        XCTAssertEqual(Array(queue.prefix(5)), [7])
    }
}
