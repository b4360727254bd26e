import XCTest
@testable import RTP

final class TransportWideSequenceNumberTests: XCTestCase {
    private func read(_ extensions: [RTPHeaderExtension], id: UInt8) throws -> UInt16? {
        let bytes = try RTPPacketBuilder(payloadType: 96, sequenceNumber: 1, timestamp: 2, ssrc: 3, extensions: extensions)
            .serialize(payload: [0xAA])
        return try bytes.withUnsafeBytes { buffer throws(RTPError) in
            try RTPPacketView(buffer).transportWideSequenceNumber(extensionID: id)
        }
    }

    func testReadsTheNegotiatedExtension() throws {
        XCTAssertEqual(try read([RTPHeaderExtension(id: 4, value: [0x01]), RTPHeaderExtension(id: 3, value: [0xFF, 0xFE])], id: 3), 65534)
        XCTAssertNil(try read([RTPHeaderExtension(id: 3, value: [0xFF, 0xFE])], id: 5), "other id")
        XCTAssertNil(try read([RTPHeaderExtension(id: 3, value: [0xFF, 0xFE])], id: 0), "not negotiated")
        XCTAssertNil(try read([RTPHeaderExtension(id: 3, value: [0xFF])], id: 3), "1-byte element is malformed")
        XCTAssertEqual(try read([RTPHeaderExtension(id: 3, value: [0x12, 0x34, 0x80, 0x05])], id: 3), 0x1234, "transport-wide-cc-02 form")
    }
}
