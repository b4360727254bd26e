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

final class SendCorkingTests: XCTestCase {
    /// Connections with two or more frames in one carry-out, once each, in order of their
    /// first frame; closes, pushes and single frames do not count.
    func testCorksOnlyConnectionsWithSeveralFrames() {
        let actions: [HubActionForTest] = [.send(1), .send(2), .close(3), .send(3), .send(2), .send(4), .send(2), .send(4), .send(1)]
        XCTAssertEqual(SendCorking.connections(toCork: actions.map(\.action)), [2, 4, 1])
        XCTAssertEqual(SendCorking.connections(toCork: [HubActionForTest.send(1), .close(1)].map(\.action)), [])
        XCTAssertEqual(SendCorking.connections(toCork: []), [])
        XCTAssertEqual(SendCorking.connections(toCork: actions.map(\.action), minimum: 3), [2])
    }
}

private enum HubActionForTest {
    case send(ConnectionID)
    case close(ConnectionID)

    var action: HubAction {
        switch self {
        case .send(let id): return .send(id, "{}")
        case .close(let id): return .close(id, code: 1000, reason: "")
        }
    }
}
