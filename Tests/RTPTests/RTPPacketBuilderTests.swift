import XCTest
@testable import RTP
import SplitMix

final class RTPPacketBuilderTests: XCTestCase {
    func testBuilderReproducesChromiumOpusFixtureByteForByte() throws {
        let builder = RTPPacketBuilder(
            marker: true, payloadType: 111, sequenceNumber: 6699, timestamp: 1_547_570_304, ssrc: 0x2F6B_3C4D,
            extensions: [
                .init(id: 1, value: [0x9E]), .init(id: 2, value: [0x12, 0x34, 0x56]),
                .init(id: 3, value: [0x00, 0x2A]), .init(id: 4, value: Array("0".utf8)),
            ])
        let bytes = try builder.serialize(payload: [0x78, 0x0B, 0xE4, 0xC1, 0x36, 0xEC, 0xC5, 0x8D])
        XCTAssertEqual(bytes, Fixtures.chromiumOpus)
    }

    func testBuilderReproducesTwoBytePaddedFixture() throws {
        let builder = RTPPacketBuilder(
            payloadType: 96, sequenceNumber: 65535, timestamp: 1, ssrc: 0x0102_0304,
            csrcs: [0xAAAA_AAAA, 0xBBBB_BBBB],
            extensions: [.init(id: 15, value: []), .init(id: 17, value: Array("abc".utf8))],
            paddingLength: 3)
        XCTAssertEqual(try builder.serialize(payload: [1, 2, 3]), Fixtures.twoByteWithCSRCsAndPadding)
    }

    func testRoundTripWithRandomFields() throws {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<500 {
            let extensionCount = Int.random(in: 0...4, using: &rng)
            let twoByte = Bool.random(using: &rng)
            let extensions = (0..<extensionCount).map { index in
                RTPHeaderExtension(
                    id: UInt8(index + 1) + (twoByte ? 20 : 0),
                    value: (0..<Int.random(in: 1...16, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
            }
            let builder = RTPPacketBuilder(
                marker: .random(using: &rng), payloadType: .random(in: 0...127, using: &rng),
                sequenceNumber: .random(in: 0...UInt16.max, using: &rng), timestamp: .random(in: 0...UInt32.max, using: &rng),
                ssrc: .random(in: 0...UInt32.max, using: &rng),
                csrcs: (0..<Int.random(in: 0...15, using: &rng)).map { _ in .random(in: 0...UInt32.max, using: &rng) },
                extensions: extensions, paddingLength: Int.random(in: 0...255, using: &rng))
            let payload = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let bytes = try builder.serialize(payload: payload)
            let parsed = try parseRTP(bytes)
            XCTAssertEqual(parsed.marker, builder.marker)
            XCTAssertEqual(parsed.payloadType, builder.payloadType)
            XCTAssertEqual(parsed.sequenceNumber, builder.sequenceNumber)
            XCTAssertEqual(parsed.timestamp, builder.timestamp)
            XCTAssertEqual(parsed.ssrc, builder.ssrc)
            XCTAssertEqual(parsed.csrcs, builder.csrcs)
            XCTAssertEqual(parsed.payload, payload)
            XCTAssertEqual(parsed.paddingLength, builder.paddingLength)
            XCTAssertEqual(parsed.extensions, Dictionary(uniqueKeysWithValues: extensions.map { ($0.id, $0.value) }))
            if !extensions.isEmpty { XCTAssertEqual(parsed.extensionProfile, twoByte ? 0x1000 : 0xBEDE) }
        }
    }

    func testWriteIntoSmallBufferIsTypedError() throws {
        let builder = RTPPacketBuilder(payloadType: 0, sequenceNumber: 1, timestamp: 2, ssrc: 3)
        var small = [UInt8](repeating: 0, count: 11)
        let payload: [UInt8] = []
        XCTAssertThrowsError(try small.withUnsafeMutableBytes { out in
            try payload.withUnsafeBytes { try builder.write(payload: $0, into: out) }
        }) { XCTAssertEqual($0 as? RTPError, .bufferTooSmall) }
        var bad = builder
        bad.payloadType = 128
        XCTAssertThrowsError(try bad.serialize(payload: [])) { XCTAssertEqual($0 as? RTPError, .invalidField) }
        bad = builder
        bad.extensions = [.init(id: 0, value: [1])]
        XCTAssertThrowsError(try bad.serialize(payload: [])) { XCTAssertEqual($0 as? RTPError, .invalidField) }
    }
}
