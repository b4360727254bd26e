import XCTest
@testable import SFU

/// `ProbeClusters`: a cluster is judged once, whole, from what arrived of it.
final class ProbeClustersTests: XCTestCase {
    /// 300 ms probe at 2 Mbit/s in 20 ms bursts (5 kB each), arriving with 20 ms of
    /// propagation on an idle path; the sender stalls 250 ms in the middle (a loaded host).
    /// Judged on close, the whole cluster reads ≈ its rate; nothing is judged before the close
    /// however long the stall, and packets after the judgement start no new cluster.
    func testStalledSenderIsJudgedWholeOnClose() throws {
        var probes = ProbeClusters()
        var now: Int64 = 0
        var sends: [Int64] = []
        for burst in 0..<15 {
            let at = Int64(burst) * 20_000 + (burst >= 7 ? 250_000 : 0)
            for _ in 0..<4 { probes.sent(cluster: 3, size: 1250, now: at); sends.append(at) }
        }
        // Feedback every 50 ms for what has arrived; no result before the close.
        while now < 700_000 {
            now += 50_000
            for (index, send) in sends.enumerated() where send + 20_000 <= now && send + 20_000 > now - 50_000 {
                probes.received(cluster: 3, size: 1250, arrival: send + 20_000 + Int64(index % 4) * 5_000, wasReportedLost: false)
            }
            XCTAssertNil(probes.takeFinished(now: now), "not before the close (at \(now))")
        }
        probes.closed(cluster: 3)
        let result = try XCTUnwrap(probes.takeFinished(now: now))
        XCTAssertEqual(result.receivedPackets, 60)
        let bps = try XCTUnwrap(result.bps)
        // 59 × 1250 B over 280 ms + 250 ms of stall (+ 15 ms of in-burst spread) ≈ 1.1 Mbit/s
        // — the rate the sender achieved, not a fragment's.
        XCTAssertEqual(bps, 1_100_000, accuracy: 100_000)
        probes.sent(cluster: 3, size: 1250, now: now)
        probes.closed(cluster: 3)
        XCTAssertNil(probes.takeFinished(now: now + 2_000_000), "a judged cluster is not judged again")
    }

    /// Less than 80 % of the cluster arrived: no rate (it overflowed the link it measured).
    func testMostlyLostClusterHasNoRate() throws {
        var probes = ProbeClusters()
        for index in 0..<10 { probes.sent(cluster: 1, size: 1200, now: Int64(index) * 2_000) }
        for index in 0..<10 {
            if index < 7 { probes.received(cluster: 1, size: 1200, arrival: 30_000 + Int64(index) * 4_000, wasReportedLost: false) } else { probes.lost(cluster: 1) }
        }
        probes.closed(cluster: 1)
        let result = try XCTUnwrap(probes.takeFinished(now: 100_000))
        XCTAssertNil(result.bps)
        XCTAssertEqual(result.receivedPackets, 7)
    }
}
