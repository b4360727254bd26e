import CAllocationCounter
import Glibc
import RTP
@testable import SFU
import XCTest

/// Transport-cc feedback is consumed for every subscriber 10–20 times a second; in steady state
/// that must not allocate (issue 3; issue 4 class 3): no copy of the RTCP body, no decoded
/// arrays (`TransportFeedbackView`), no filtered or mapped windows in the estimator.
/// Feedback and sends are scripted up front (1 Mbit/s, 2 % loss, a 10-packet probe cluster
/// every 500 ms, then a cap that builds a queue), replayed for 3 s to warm up, and the next
/// 3 s are counted.
final class BandwidthEstimatorAllocationTests: XCTestCase {
    /// One scripted event: a packet sent, or a feedback body (RTCP compound bytes) arriving.
    enum Event {
        case sent(sequence: UInt16, size: Int, at: Int64, cluster: Int?)
        case feedback(compound: [UInt8], at: Int64)
    }

    /// 6 s of sends and feedback: 1,200-byte packets at 1 Mbit/s; from 4.5 s the link carries
    /// 600 kbit/s behind a 400 ms queue (growing-queue, over-use and loss-burst paths).
    func script() throws -> [Event] {
        var link = SimulatedLink(capacityBps: 5_000_000, randomLoss: 0.02)
        var generator = TransportFeedbackGenerator()
        var events: [Event] = []
        var inFlight: [(arrival: Int64, seq: UInt16)] = []
        var seq: UInt16 = 0
        var nextSend: Int64 = 0
        var cluster = 0
        var now: Int64 = 0
        while now < 6_000_000 {
            now += 1_000
            if now == 4_500_000 { link.capacityBps = 600_000 }
            while nextSend <= now {
                events.append(.sent(sequence: seq, size: 1200, at: nextSend, cluster: nil))
                if let arrival = link.send(size: 1200, now: nextSend) { inFlight.append((arrival, seq)) }
                seq &+= 1
                nextSend += 9_600
            }
            if now % 500_000 == 0 {
                cluster += 1
                for index in 0..<10 {
                    let at = now + Int64(index) * 2_000
                    events.append(.sent(sequence: seq, size: 1200, at: at, cluster: cluster))
                    if let arrival = link.send(size: 1200, now: at) { inFlight.append((arrival, seq)) }
                    seq &+= 1
                }
            }
            inFlight.sort { $0.arrival < $1.arrival }
            while let first = inFlight.first, first.arrival <= now {
                generator.record(sequenceNumber: first.seq, arrival: first.arrival)
                inFlight.removeFirst()
            }
            if generator.isDue(now: now) {
                for packet in generator.rtcpPackets(now: now, senderSSRC: 0xB0B, mediaSSRC: 0) {
                    events.append(.feedback(compound: try RTCPCompound.serialize([.transportFeedback(packet)]), at: now))
                }
            }
        }
        return events
    }

    /// Counts allocations of `body` on this thread (with the first 64 stacks printed when any).
    func allocations(_ body: () -> Void) -> UInt64 {
        sb_alloc_backtrace_arm(64)
        sb_alloc_count_enable_this_thread(true)
        sb_alloc_backtrace_this_thread(true)
        let before = sb_alloc_count_read()
        body()
        let counted = sb_alloc_count_read() - before
        sb_alloc_backtrace_this_thread(false)
        sb_alloc_count_enable_this_thread(false)
        for index in 0..<Int(sb_alloc_backtrace_recorded()) {
            print("allocation \(index):")
            sb_alloc_backtrace_print(Int32(index), STDOUT_FILENO)
        }
        sb_alloc_backtrace_arm(0)
        return counted
    }

    func testEstimatorConsumesFeedbackWithoutAllocating() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        let events = try script()
        var estimator = BandwidthEstimator()
        var feedbacks = 0
        func replay(_ range: Range<Int>) {
            var index = range.lowerBound
            while index < range.upperBound {
                switch events[index] {
                case .sent(let sequence, let size, let at, let cluster):
                    estimator.packetSent(transportSequenceNumber: sequence, size: size, now: at, probeCluster: cluster)
                case .feedback(let compound, let at):
                    // The FCI after the RTCP header (4), sender and media SSRC (8).
                    compound.withUnsafeBytes { raw in
                        if let view = try? TransportFeedbackView(body: UnsafeRawBufferPointer(rebasing: raw[12...])) {
                            estimator.transportFeedback(view, now: at)
                            feedbacks += 1
                        }
                    }
                }
                index += 1
            }
        }
        let warm = events.firstIndex { if case .sent(_, _, let at, _) = $0 { return at >= 3_000_000 } else { return false } } ?? 0
        replay(0..<warm)
        let counted = allocations { replay(warm..<events.count) }
        print("estimator: \(feedbacks) feedbacks, estimate \(estimator.estimateBps), probe \(estimator.lastProbeBps ?? 0), "
            + "growing-queue cuts \(estimator.queueOnsets), loss bursts \(estimator.lossBursts), allocations \(counted)")
        XCTAssertGreaterThan(feedbacks, 50)
        XCTAssertNotNil(estimator.lastProbeBps, "probe clusters were judged")
        XCTAssertLessThan(estimator.estimateBps, 900_000, "the cap was acted on")
        XCTAssertEqual(counted, 0, "allocations while consuming 3 s of feedback")
    }

    /// The same through the router: `recordSent` for every packet and `handleRTCP` with the
    /// feedback compounds (the RTCP body is read in place, not copied).
    func testRouterConsumesFeedbackWithoutAllocating() throws {
        try XCTSkipUnless(sb_alloc_count_available(), "allocations are not counted under AddressSanitizer")
        let events = try script()
        let router = makeRouter()
        try router.join(bob, room: room, description: receiver("b"), now: 0)
        let ntp = NTPTime(raw: 0)
        var failures = 0
        func replay(_ range: Range<Int>) {
            var index = range.lowerBound
            while index < range.upperBound {
                switch events[index] {
                case .sent(let sequence, let size, let at, _):
                    router.recordSent(subscriber: bob, transportSequenceNumber: sequence, size: size, now: at)
                case .feedback(let compound, let at):
                    compound.withUnsafeBytes { raw in
                        do { _ = try router.handleRTCP(from: bob, packet: raw, now: at, ntp: ntp) } catch { failures += 1 }
                    }
                }
                index += 1
            }
        }
        let warm = events.firstIndex { if case .sent(_, _, let at, _) = $0 { return at >= 3_000_000 } else { return false } } ?? 0
        replay(0..<warm)
        let counted = allocations { replay(warm..<events.count) }
        let stats = try XCTUnwrap(router.downlinkStats(bob, now: 6_000_000))
        print("router: \(stats.transportFeedbacks) feedbacks, estimate \(stats.estimateBps), allocations \(counted)")
        XCTAssertEqual(failures, 0)
        XCTAssertGreaterThan(stats.transportFeedbacks, 50)
        XCTAssertEqual(stats.malformedTransportFeedback, 0)
        XCTAssertEqual(counted, 0, "allocations while the router consumed 3 s of feedback")
    }
}
