#if canImport(Glibc)
import Glibc
#endif
import RTP
import XCTest
@testable import SFU

/// Prints the per-send cost of `Router.recordSent` (the downlink estimator's hot-path input)
/// and of one layer evaluation for 10 subscribers × 3 video tracks. Figures only. Skipped
/// unless SWITCHBOARD_BENCH=1; run in release:
/// `SWITCHBOARD_BENCH=1 swift test -c release --filter SFUTests.DownlinkBenchmarkTests`
final class DownlinkBenchmarkTests: XCTestCase {
    func testPrintRecordSentAndEvaluationCost() throws {
        guard let flag = getenv("SWITCHBOARD_BENCH"), String(cString: flag) == "1" else {
            throw XCTSkip("set SWITCHBOARD_BENCH=1 (and use -c release) to run")
        }
        let router = makeRouter()
        let members = (0..<10).map { ParticipantID(100 + UInt32($0)) }
        for member in members { try router.join(member, room: room, description: receiver("s"), now: 0) }
        for (index, member) in members.prefix(3).enumerated() {
            let base = UInt32(index + 1) << 8
            try router.publish(member, track: videoTrack("cam", layers: [StreamDescription(ssrc: base), StreamDescription(ssrc: base + 1), StreamDescription(ssrc: base + 2)]), now: 0)
        }
        let clock = ContinuousClock()
        let sends = 1_000_000
        // 1,000 packets/s per subscriber: 2 s of history = 2,000 entries each, steady state.
        let record = clock.measure {
            for index in 0..<sends {
                router.recordSent(subscriber: members[index % 10], transportSequenceNumber: UInt16(truncatingIfNeeded: index / 10),
                                  size: 1200, now: Int64(index) * 100)
            }
        }
        // Give every subscriber a signal so the selectors run.
        for member in members {
            _ = try rtcp(router, from: member, [.remb(RTCPReceiverEstimatedMaxBitrate(senderSSRC: 1, bitrate: 2_000_000, ssrcs: []))], now: Int64(sends) * 100)
        }
        let evaluations = 1_000
        var now = Int64(sends) * 100
        let evaluate = clock.measure {
            for _ in 0..<evaluations {
                now += Router.layerEvaluationInterval
                router.evaluateLayers(now: now)
            }
        }
        func nanos(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9
        }
        print(String(format: "recordSent: %.0f ns/send; layer evaluation (10 subscribers × 2–3 video tracks): %.1f µs",
                     nanos(record) / Double(sends), nanos(evaluate) / Double(evaluations) / 1000))
    }
}
