import XCTest
@testable import NetEmu

/// The path model alone, with `now` passed in: no sockets, no clock.
final class ImpairmentPipelineTests: XCTestCase {
    private let ms: UInt64 = 1_000_000

    func testCleanPathDeliversImmediately() {
        var p = ImpairmentPipeline(seed: 1)
        for i in 0..<100 {
            XCTAssertEqual(p.admit(size: 100, now: UInt64(i) * ms), .deliver(atNs: UInt64(i) * ms, overtakes: false))
        }
    }

    func testRandomLossRateAndReproducibility() {
        func run(seed: UInt64) -> [Bool] {
            var p = ImpairmentPipeline(impairment: Impairment(loss: 0.1), seed: seed)
            return (0..<100_000).map { p.admit(size: 100, now: UInt64($0) * ms) == .drop(.randomLoss) }
        }
        let a = run(seed: 7)
        let fraction = Double(a.filter { $0 }.count) / Double(a.count)
        XCTAssertEqual(fraction, 0.1, accuracy: 0.005)
        XCTAssertEqual(a, run(seed: 7), "same seed, same decisions")
        XCTAssertNotEqual(a, run(seed: 8))
    }

    func testGilbertElliottBurstLengthAndLoss() {
        let ge = GilbertElliott(goodToBad: 0.02, badToGood: 0.25)
        var p = ImpairmentPipeline(impairment: Impairment(burstLoss: ge), seed: 3)
        let lost = (0..<200_000).map { p.admit(size: 100, now: UInt64($0) * ms) == .drop(.burstLoss) }
        let bursts = runLengths(lost)
        let mean = Double(bursts.reduce(0, +)) / Double(bursts.count)
        let fraction = Double(lost.filter { $0 }.count) / Double(lost.count)
        print("GE pure: loss \(fraction), bursts \(bursts.count), mean burst \(mean) (expected \(1 / ge.badToGood), loss \(ge.stationaryLoss))")
        XCTAssertEqual(mean, 1 / ge.badToGood, accuracy: 0.25)
        XCTAssertEqual(fraction, ge.stationaryLoss, accuracy: 0.01)
        // Random loss at the same rate has mean burst ≈ 1/(1−p) ≈ 1.08: GE is clearly burstier.
        XCTAssertGreaterThan(mean, 3)
    }

    func testFixedDelay() {
        var p = ImpairmentPipeline(impairment: Impairment(delayMs: 50), seed: 1)
        XCTAssertEqual(p.admit(size: 100, now: 10 * ms), .deliver(atNs: 60 * ms, overtakes: false))
    }

    func testJitterWithReorderingOvertakesAndStaysInRange() {
        var p = ImpairmentPipeline(impairment: Impairment(delayMs: 50, jitterMs: 30), seed: 5)
        var overtakes = 0
        for i in 0..<10_000 {
            let now = UInt64(i) * ms
            guard case .deliver(let at, let o) = p.admit(size: 100, now: now) else { return XCTFail("no drop configured") }
            XCTAssertGreaterThanOrEqual(at - now, 20 * ms)
            XCTAssertLessThanOrEqual(at - now, 80 * ms)
            if o { overtakes += 1 }
        }
        XCTAssertGreaterThan(overtakes, 1000, "packets 1 ms apart with ±30 ms jitter overtake often")
    }

    func testJitterWithoutReorderingKeepsOrder() {
        var p = ImpairmentPipeline(impairment: Impairment(delayMs: 50, jitterMs: 30, jitterDistribution: .normal, allowReordering: false), seed: 5)
        var last: UInt64 = 0
        for i in 0..<10_000 {
            let now = UInt64(i) * ms
            guard case .deliver(let at, let o) = p.admit(size: 100, now: now) else { return XCTFail("no drop configured") }
            XCTAssertFalse(o)
            XCTAssertGreaterThanOrEqual(at, last)
            XCTAssertGreaterThanOrEqual(at - now, 0)
            last = at
        }
    }

    func testRateCapSerialisesAtTheCapAndTailDrops() {
        // 1200-byte packets every 9.6 ms (1 Mbit/s) into a 300 kbit/s cap with a 12,000-byte queue.
        let cap = RateCap(bitsPerSecond: 300_000, burstBytes: 1200, queueLimitBytes: 12_000)
        var p = ImpairmentPipeline(impairment: Impairment(rate: cap), seed: 1)
        var departures: [UInt64] = []
        var drops = 0
        var maxWait: UInt64 = 0
        for i in 0..<1000 {
            let now = UInt64(Double(i) * 9.6e6)
            switch p.admit(size: 1200, now: now) {
            case .deliver(let at, _): departures.append(at); maxWait = max(maxWait, at - now)
            case .drop(let reason): XCTAssertEqual(reason, .queueFull); drops += 1
            }
        }
        let span = Double(departures.last! - departures.first!) / 1e9
        let rate = Double(departures.count - 1) * 9600 / span
        XCTAssertEqual(rate, 300_000, accuracy: 300)
        XCTAssertGreaterThan(drops, 600)
        // Waiting is bounded by the queue: 12,000 bytes ahead at 300 kbit/s = 320 ms (+ own packet).
        XCTAssertLessThanOrEqual(Double(maxWait) / 1e6, cap.maxQueueDelayMs + 32.1)
    }

    func testUnderTheCapNothingWaits() {
        var p = ImpairmentPipeline(impairment: Impairment(rate: RateCap(bitsPerSecond: 1_000_000)), seed: 1)
        for i in 0..<100 {
            let now = UInt64(i) * 20 * ms // 1200 B every 20 ms = 480 kbit/s
            XCTAssertEqual(p.admit(size: 1200, now: now), .deliver(atNs: now, overtakes: false))
        }
    }

    func testValidationRejectsOutOfRange() {
        XCTAssertThrowsError(try Impairment(loss: 1.5).validate()) { XCTAssertEqual($0 as? NetEmuError, .badImpairment("loss")) }
        XCTAssertThrowsError(try Impairment(delayMs: -1).validate()) { XCTAssertEqual($0 as? NetEmuError, .badImpairment("delayMs")) }
        XCTAssertThrowsError(try Impairment(jitterMs: .nan).validate()) { XCTAssertEqual($0 as? NetEmuError, .badImpairment("jitterMs")) }
        XCTAssertThrowsError(try Impairment(burstLoss: GilbertElliott(goodToBad: -0.1, badToGood: 0.5)).validate())
        XCTAssertThrowsError(try Impairment(rate: RateCap(bitsPerSecond: 0)).validate()) { XCTAssertEqual($0 as? NetEmuError, .badImpairment("rate.bitsPerSecond")) }
        XCTAssertNoThrow(try Impairment(loss: 0.1, delayMs: 50, jitterMs: 30, rate: RateCap(bitsPerSecond: 300_000)).validate())
        XCTAssertEqual(NetEmuError.badImpairment("loss").code, "netemu_bad_impairment")
    }

    func testLogRingKeepsTheNewestEntries() {
        var ring = RelayLogRing(capacity: 3)
        for i in 0..<5 {
            ring.append(RelayLogEntry(index: UInt64(i), direction: .uplink, clientPort: 1, size: 10, arrivalNs: UInt64(i), action: .forwarded, rtp: nil))
        }
        XCTAssertEqual(ring.ordered.map(\.index), [2, 3, 4])
        XCTAssertEqual(ring.overwritten, 2)
    }

    func testRTPTagRecognisesRTPOnly() {
        let rtp: [UInt8] = [0x90, 0xE0, 0x12, 0x34, 0, 0, 0, 1, 0xCA, 0xFE, 0xBA, 0xBE, 0xBE, 0xDE]
        XCTAssertEqual(RTPTag(datagram: rtp), RTPTag(datagram: rtp))
        XCTAssertEqual(RTPTag(datagram: rtp)?.sequence, 0x1234)
        XCTAssertEqual(RTPTag(datagram: rtp)?.ssrc, 0xCAFE_BABE)
        XCTAssertEqual(RTPTag(datagram: rtp)?.payloadType, 96)
        XCTAssertEqual(RTPTag(datagram: rtp)?.marker, true, "0xE0: marker bit and payload type 96")
        XCTAssertEqual(RTPTag(datagram: rtp)?.timestamp, 1)
        XCTAssertNil(RTPTag(datagram: [0x80, 200] + [UInt8](repeating: 0, count: 26)), "RTCP SR")
        XCTAssertNil(RTPTag(datagram: [22, 0xFE, 0xFD] + [UInt8](repeating: 0, count: 20)), "DTLS")
        XCTAssertNil(RTPTag(datagram: [0x80, 96, 0, 1]), "too short")
    }
}
