import XCTest
@testable import RTP

final class RTPPacketRewriterTests: XCTestCase {
    func testRewriteHeaderFieldsInPlace() throws {
        var packet = Fixtures.chromiumOpus
        try packet.withUnsafeMutableBytes { buffer in
            try RTPPacketRewriter.setSSRC(0xDEAD_BEEF, in: buffer)
            try RTPPacketRewriter.setSequenceNumber(65535, in: buffer)
            try RTPPacketRewriter.setTimestamp(0xFFFF_FFFE, in: buffer)
            try RTPPacketRewriter.setPayloadType(109, in: buffer)
        }
        var parsed = try parseRTP(packet)
        XCTAssertEqual(parsed.ssrc, 0xDEAD_BEEF)
        XCTAssertEqual(parsed.sequenceNumber, 65535)
        XCTAssertEqual(parsed.timestamp, 0xFFFF_FFFE)
        XCTAssertEqual(parsed.payloadType, 109)
        XCTAssertTrue(parsed.marker, "marker survives a PT rewrite")
        try packet.withUnsafeMutableBytes { try RTPPacketRewriter.setMarker(false, in: $0) }
        parsed = try parseRTP(packet)
        XCTAssertFalse(parsed.marker)
        XCTAssertEqual(parsed.payloadType, 109)
        XCTAssertEqual(Array(packet[12...]), Array(Fixtures.chromiumOpus[12...]), "only the fixed header changed")
    }

    func testReplaceOneByteExtensionValue() throws {
        var packet = Fixtures.chromiumOpus
        try packet.withUnsafeMutableBytes { buffer in
            try RTPPacketRewriter.replaceExtensionValue(id: 2, with: [0xAB, 0xCD, 0xEF], in: buffer)
            try RTPPacketRewriter.replaceExtensionValue(id: 3, with: [0x01, 0x00], in: buffer)
        }
        let parsed = try parseRTP(packet)
        XCTAssertEqual(parsed.extensions[2], [0xAB, 0xCD, 0xEF])
        XCTAssertEqual(parsed.extensions[3], [0x01, 0x00])
        XCTAssertEqual(parsed.extensions[1], [0x9E])
        XCTAssertEqual(parsed.payload, [0x78, 0x0B, 0xE4, 0xC1, 0x36, 0xEC, 0xC5, 0x8D])
    }

    func testReplaceExtensionErrors() throws {
        var packet = Fixtures.chromiumOpus
        try packet.withUnsafeMutableBytes { buffer in
            XCTAssertThrowsError(try RTPPacketRewriter.replaceExtensionValue(id: 2, with: [1, 2], in: buffer)) {
                XCTAssertEqual($0 as? RTPError, .extensionLengthMismatch)
            }
            XCTAssertThrowsError(try RTPPacketRewriter.replaceExtensionValue(id: 9, with: [1], in: buffer)) {
                XCTAssertEqual($0 as? RTPError, .extensionNotFound)
            }
            XCTAssertThrowsError(try RTPPacketRewriter.setPayloadType(200, in: buffer)) {
                XCTAssertEqual($0 as? RTPError, .invalidField)
            }
        }
        var short = [UInt8](repeating: 0x80, count: 11)
        try short.withUnsafeMutableBytes { buffer in
            XCTAssertThrowsError(try RTPPacketRewriter.setSSRC(1, in: buffer)) { XCTAssertEqual($0 as? RTPError, .truncated) }
        }
        XCTAssertEqual(packet, Fixtures.chromiumOpus, "failed rewrites leave the packet untouched")
    }
}
