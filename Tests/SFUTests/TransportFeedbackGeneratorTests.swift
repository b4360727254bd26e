import RTP
import XCTest
@testable import SFU
import SplitMix

final class TransportFeedbackGeneratorTests: XCTestCase {
    /// Every feedback goes through the wire codec, as a publisher would see it.
    private func wire(_ packets: [TransportFeedback]) throws -> [TransportFeedback] {
        try packets.map { packet in
            let rtcp = try RTCPCompound.serialize([.transportFeedback(RTCPTransportFeedback(senderSSRC: 1, mediaSSRC: 2, feedback: packet))])
            XCTAssertLessThanOrEqual(rtcp.count, 1200)
            guard case .transportFeedback(let tcc)? = try RTCPCompound.parse(rtcp).first else { throw TransportFeedbackError.truncated }
            return try tcc.decoded()
        }
    }

    /// Reported arrivals relative to the first reported one (the receiver's clock origin is
    /// the 64 ms reference grid, so absolute values differ by the rounding).
    private func results(_ packets: [TransportFeedback]) -> [(UInt16, Int64?)] {
        packets.flatMap { $0.packetResults.map { ($0.sequenceNumber, $0.arrivalMicros) } }
    }

    func testReportsReceivedAndMissingWithQuarterMillisecondAccuracy() throws {
        var generator = TransportFeedbackGenerator()
        var truth: [UInt16: Int64] = [:]
        var time: Int64 = 5_000_123
        for seq: UInt16 in 10..<60 where seq % 7 != 5 {  // every 7th lost (12, 19, ...)
            time += 1_337
            generator.record(sequenceNumber: seq, arrival: time)
            truth[seq] = time
        }
        let sent = try wire(generator.feedback(now: time))
        XCTAssertEqual(sent.count, 1)
        let reported = results(sent)
        XCTAssertEqual(reported.map(\.0), Array(10..<60))
        guard let first = reported.first?.1 else { return XCTFail() }
        let origin = first - (truth[10] ?? 0)
        for (seq, arrival) in reported {
            if let expected = truth[seq] {
                guard let arrival else { return XCTFail("seq \(seq) reported lost") }
                XCTAssertLessThan(abs(arrival - origin - expected), 250, "seq \(seq): ticks never drift")
            } else {
                XCTAssertNil(arrival, "seq \(seq) was lost")
            }
        }
        XCTAssertEqual(sent[0].feedbackPacketCount, 0)
    }

    func testIntervalAndNothingNew() {
        var generator = TransportFeedbackGenerator()
        generator.record(sequenceNumber: 1, arrival: 1_000)
        XCTAssertEqual(generator.feedback(now: 1_000).count, 1)
        generator.record(sequenceNumber: 2, arrival: 50_000)
        XCTAssertTrue(generator.feedback(now: 99_999).isEmpty, "100 ms interval not over")
        XCTAssertFalse(generator.isDue(now: 100_999))
        let next = generator.feedback(now: 101_000)
        XCTAssertEqual(next.map(\.baseSequenceNumber), [2])
        XCTAssertEqual(next.map(\.feedbackPacketCount), [1])
        XCTAssertTrue(generator.feedback(now: 300_000).isEmpty, "nothing received since")
    }

    func testTrailingLossWaitsForLaterPacket() {
        var generator = TransportFeedbackGenerator()
        for seq: UInt16 in [1, 2, 3] { generator.record(sequenceNumber: seq, arrival: Int64(seq) * 1000) }
        XCTAssertEqual(generator.feedback(now: 10_000).first?.receiveDeltas.count, 3)
        generator.record(sequenceNumber: 6, arrival: 200_000)
        let next = generator.feedback(now: 200_000)
        XCTAssertEqual(next.first?.baseSequenceNumber, 4)
        XCTAssertEqual(next.first?.receiveDeltas.map { $0 == nil }, [true, true, false], "4 and 5 lost, 6 received")
    }

    func testSequenceWrapInOnePacket() throws {
        var generator = TransportFeedbackGenerator()
        var time: Int64 = 0
        for seq in (65530...65535).map({ UInt16($0) }) + [0, 1, 2] {
            time += 2_000
            generator.record(sequenceNumber: seq, arrival: time)
        }
        let sent = try wire(generator.feedback(now: time))
        XCTAssertEqual(sent.count, 1)
        XCTAssertEqual(results(sent).map(\.0), [65530, 65531, 65532, 65533, 65534, 65535, 0, 1, 2])
        XCTAssertTrue(results(sent).allSatisfy { $0.1 != nil })
    }

    func testReorderedArrivalGivesNegativeDelta() throws {
        var generator = TransportFeedbackGenerator()
        generator.record(sequenceNumber: 100, arrival: 1_000_000)
        generator.record(sequenceNumber: 102, arrival: 1_004_000)
        generator.record(sequenceNumber: 101, arrival: 1_010_000)  // overtaken by 102
        let sent = try wire(generator.feedback(now: 1_010_000))
        let arrivals = results(sent).map(\.1)
        guard arrivals.count == 3, let a = arrivals[0], let b = arrivals[1], let c = arrivals[2] else { return XCTFail("\(arrivals)") }
        XCTAssertEqual(b - a, 10_000)
        XCTAssertEqual(c - b, -6_000, "102 arrived before 101: large negative delta")
    }

    func testLateArrivalIsReportedAgain() {
        var generator = TransportFeedbackGenerator()
        generator.record(sequenceNumber: 1, arrival: 0)
        generator.record(sequenceNumber: 3, arrival: 2_000)
        let first = generator.feedback(now: 2_000)
        XCTAssertEqual(first.first?.receiveDeltas.map { $0 == nil }, [false, true, false], "2 reported lost")
        generator.record(sequenceNumber: 2, arrival: 150_000)
        let second = generator.feedback(now: 150_000)
        XCTAssertEqual(second.first?.baseSequenceNumber, 2, "window moved back to the late packet")
        XCTAssertEqual(second.first?.receiveDeltas.map { $0 == nil }, [false, false], "2 and 3 reported received")
    }

    func testLargeBurstSplitsIntoBoundedConsecutivePackets() throws {
        var generator = TransportFeedbackGenerator()
        var rng = SplitMix64(state: 4)
        var time: Int64 = 0
        var expected: [UInt16: Bool] = [:]
        for index in 0..<3000 {
            let seq = UInt16(truncatingIfNeeded: 64000 + index)
            let lost = UInt64.random(in: 0..<5, using: &rng) == 0
            expected[seq] = !lost
            // Alternate small and large gaps so 2-bit vectors (the least dense chunks) are used.
            time += index % 2 == 0 ? 100 : 70_000
            if !lost { generator.record(sequenceNumber: seq, arrival: time) }
        }
        // The last seq must be received for the range to end there.
        let last = UInt16(truncatingIfNeeded: 64000 + 2999)
        if expected[last] == false { generator.record(sequenceNumber: last, arrival: time); expected[last] = true }
        let sent = try wire(generator.feedback(now: time))
        XCTAssertGreaterThan(sent.count, 3)
        XCTAssertEqual(sent.map(\.feedbackPacketCount), (0..<sent.count).map { UInt8($0) })
        var next = sent[0].baseSequenceNumber
        for packet in sent {
            XCTAssertEqual(packet.baseSequenceNumber, next, "packets are contiguous")
            next = packet.baseSequenceNumber &+ UInt16(packet.receiveDeltas.count)
        }
        let reported = results(sent)
        XCTAssertEqual(reported.count, 3000 - Int(sent[0].baseSequenceNumber &- 64000))
        for (seq, arrival) in reported {
            XCTAssertEqual(arrival != nil, expected[seq], "seq \(seq)")
        }
    }

    func testGapOverEightSecondsStartsNewPacket() {
        var generator = TransportFeedbackGenerator()
        generator.record(sequenceNumber: 1, arrival: 0)
        generator.record(sequenceNumber: 2, arrival: 9_000_000)  // 36000 ticks > Int16.max
        let sent = generator.feedback(now: 9_000_000)
        XCTAssertEqual(sent.map(\.baseSequenceNumber), [1, 2])
        XCTAssertEqual(sent.map(\.receiveDeltas.count), [1, 1])
    }

    func testForgetsReportedPacketsAfterBackWindow() {
        var generator = TransportFeedbackGenerator()
        for seq in 0..<100 { generator.record(sequenceNumber: UInt16(seq), arrival: Int64(seq) * 1_000) }
        _ = generator.feedback(now: 100_000)
        XCTAssertEqual(generator.storedPackets, 100, "kept for late re-reports")
        generator.record(sequenceNumber: 100, arrival: 1_000_000)
        _ = generator.feedback(now: 1_000_000)
        XCTAssertEqual(generator.storedPackets, 1, "older than 500 ms and reported: dropped")
    }

    func testPacketOlderThanWhatIsRememberedIsNotReReported() {
        var generator = TransportFeedbackGenerator()
        generator.record(sequenceNumber: 1, arrival: 0)
        for seq in 3..<50 { generator.record(sequenceNumber: UInt16(seq), arrival: Int64(seq) * 1_000) }
        _ = generator.feedback(now: 100_000)
        generator.record(sequenceNumber: 50, arrival: 1_000_000)
        _ = generator.feedback(now: 1_000_000)  // 1...49 forgotten (older than 500 ms)
        generator.record(sequenceNumber: 2, arrival: 1_050_000)  // 1 s late
        generator.record(sequenceNumber: 51, arrival: 1_100_000)
        let sent = generator.feedback(now: 1_100_000)
        XCTAssertEqual(sent.map(\.baseSequenceNumber), [51], "3...49 must not be re-reported as lost")
    }
}
