import XCTest
@testable import RTP
import SplitMix

final class RTPPacketViewTests: XCTestCase {
    func testChromiumOpusPacketWithOneByteExtensions() throws {
        let parsed = try parseRTP(Fixtures.chromiumOpus)
        XCTAssertTrue(parsed.marker)
        XCTAssertEqual(parsed.payloadType, 111)
        XCTAssertEqual(parsed.sequenceNumber, 6699)
        XCTAssertEqual(parsed.timestamp, 1_547_570_304)
        XCTAssertEqual(parsed.ssrc, 0x2F6B_3C4D)
        XCTAssertEqual(parsed.csrcs, [])
        XCTAssertEqual(parsed.extensionProfile, 0xBEDE)
        XCTAssertEqual(parsed.extensions, [1: [0x9E], 2: [0x12, 0x34, 0x56], 3: [0x00, 0x2A], 4: [0x30]])
        XCTAssertEqual(parsed.payload, [0x78, 0x0B, 0xE4, 0xC1, 0x36, 0xEC, 0xC5, 0x8D])
        XCTAssertEqual(parsed.paddingLength, 0)
    }

    func testExtensionLookupByID() throws {
        try Fixtures.chromiumOpus.withUnsafeBytes { buffer in
            let view = try RTPPacketView(buffer)
            XCTAssertEqual(view.headerLength, 28)
            XCTAssertEqual(view.extensionValue(id: 2).map(Array.init), [0x12, 0x34, 0x56])
            XCTAssertEqual(view.extensionValueRange(id: 3), 23..<25)
            XCTAssertNil(view.extensionValue(id: 5))
            XCTAssertEqual(view.headerExtensions.map(\.id), [1, 2, 3, 4])
        }
    }

    func testTwoByteExtensionsCSRCsAndPadding() throws {
        let parsed = try parseRTP(Fixtures.twoByteWithCSRCsAndPadding)
        XCTAssertFalse(parsed.marker)
        XCTAssertEqual(parsed.payloadType, 96)
        XCTAssertEqual(parsed.sequenceNumber, 65535)
        XCTAssertEqual(parsed.csrcs, [0xAAAA_AAAA, 0xBBBB_BBBB])
        XCTAssertEqual(parsed.extensionProfile, 0x1000)
        XCTAssertEqual(parsed.extensions, [15: [], 17: Array("abc".utf8)])
        XCTAssertEqual(parsed.payload, [1, 2, 3])
        XCTAssertEqual(parsed.paddingLength, 3)
    }

    func testUnknownExtensionProfileIsOpaque() throws {
        var packet = Fixtures.chromiumOpus
        packet[12] = 0x12; packet[13] = 0x34  // profile 0x1234
        let parsed = try parseRTP(packet)
        XCTAssertEqual(parsed.extensionProfile, 0x1234)
        XCTAssertEqual(parsed.extensions, [:])
        XCTAssertEqual(parsed.payload.count, 8)
    }

    func testOneByteID15StopsProcessing() throws {
        var packet = Fixtures.chromiumOpus
        packet[18] = 0xF2  // id=2 element header becomes id=15: ignore the rest
        let parsed = try parseRTP(packet)
        XCTAssertEqual(parsed.extensions, [1: [0x9E]])
    }

    func testTypedErrors() {
        assertRTPError([], .truncated)
        assertRTPError(Array(Fixtures.chromiumOpus[0..<11]), .truncated)
        var v1 = Fixtures.chromiumOpus
        v1[0] = 0x50
        assertRTPError(v1, .badVersion(1))
        // CC=15 needs 72 header bytes; the packet has 36.
        var cc = Fixtures.chromiumOpus
        cc[0] = 0x8F
        assertRTPError(cc, .badCSRCCount)
        // Extension length of 100 words runs past the end.
        var ext = Fixtures.chromiumOpus
        ext[15] = 100
        assertRTPError(ext, .badExtension)
        // One-byte element claiming 16 bytes inside a 12-byte block.
        var element = Fixtures.chromiumOpus
        element[16] = 0x1F
        assertRTPError(element, .badExtension)
        // Padding count 0, and padding count larger than the payload.
        var padZero = Fixtures.chromiumOpus
        padZero[0] |= 0x20
        padZero[padZero.count - 1] = 0
        assertRTPError(padZero, .badPadding)
        var padHuge = Fixtures.chromiumOpus
        padHuge[0] |= 0x20
        padHuge[padHuge.count - 1] = 9
        assertRTPError(padHuge, .badPadding)
        XCTAssertEqual(RTPError.badPadding.code, "rtp_bad_padding")
    }

    /// Every prefix shorter than the header is a typed error; longer prefixes cut the payload.
    func testEveryPrefixOfValidPacketsGivesTypedErrorOrShorterPayload() {
        let packet = Fixtures.chromiumOpus
        for length in 0...packet.count {
            let prefix = Array(packet[0..<length])
            do {
                let parsed = try parseRTP(prefix)
                XCTAssertGreaterThanOrEqual(length, 28, "prefix \(length) parsed")
                XCTAssertEqual(parsed.payload, Array(packet[28..<length]))
            } catch {
                XCTAssertLessThan(length, 28, "prefix \(length): \(error)")
                XCTAssertTrue([.truncated, .badExtension].contains(error), "prefix \(length): \(error)")
            }
        }
        // The padded fixture: every prefix either parses or throws a typed error.
        let padded = Fixtures.twoByteWithCSRCsAndPadding
        var failures = 0
        for length in 0..<padded.count {
            do { _ = try parseRTP(Array(padded[0..<length])) } catch { failures += 1 }
        }
        XCTAssertGreaterThan(failures, 30)
    }

    func testRandomBytesNeverCrash() {
        var rng = SplitMix64(seed: 0x5EED_0001)
        var parsedCount = 0
        var errors: Set<String> = []
        for _ in 0..<20_000 {
            let length = Int.random(in: 0..<80, using: &rng)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if !bytes.isEmpty, Bool.random(using: &rng) { bytes[0] = 0x80 | (bytes[0] & 0x3F) }  // force V=2 half the time
            do {
                let parsed = try parseRTP(bytes)
                XCTAssertLessThanOrEqual(parsed.payload.count + parsed.paddingLength, length - 12)
                parsedCount += 1
            } catch {
                errors.insert(error.code)
            }
        }
        XCTAssertGreaterThan(parsedCount, 100)
        XCTAssertTrue(errors.isSuperset(of: ["rtp_truncated", "rtp_bad_version", "rtp_bad_padding", "rtp_bad_extension", "rtp_bad_csrc_count"]), "\(errors)")
    }
}
