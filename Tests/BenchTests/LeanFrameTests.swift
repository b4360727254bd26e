@testable import Bench
import XCTest

/// RFC 6455 framing of the lean pair client against the examples of §5.7 and the rules of
/// §5.1–§5.6.
final class LeanFrameTests: XCTestCase {
    /// §5.7: "A single-frame masked text message" (key 0x37fa213d).
    static let maskedHello: [UInt8] = [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58]
    /// §5.7: "A single-frame unmasked text message".
    static let unmaskedHello: [UInt8] = [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]
    /// §5.7: "A fragmented unmasked text message" ("Hel", then "lo").
    static let fragmentedHello: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6c, 0x80, 0x02, 0x6c, 0x6f]
    /// §5.7: "Unmasked Ping request" with body "Hello".
    static let unmaskedPing: [UInt8] = [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f]

    func decodeAll(_ bytes: [UInt8], max: Int = 1 << 20) throws(LeanWebSocketError) -> (messages: [LeanFrameDecoder.Message], consumed: Int) {
        var decoder = LeanFrameDecoder(maxMessage: max)
        var messages: [LeanFrameDecoder.Message] = []
        let consumed = try bytes.withUnsafeBufferPointer { buffer throws(LeanWebSocketError) in
            try decoder.decode(buffer) { messages.append($0) }
        }
        return (messages, consumed)
    }

    func encode(opcode: UInt8, _ payload: [UInt8], key: UInt32, fin: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        payload.withUnsafeBytes { LeanFrame.appendMasked(opcode: opcode, fin: fin, payload: $0, maskKey: key, to: &out) }
        return out
    }

    func testMaskedHelloIsTheRFCExample() {
        var out: [UInt8] = []
        LeanFrame.appendMaskedText("Hello", maskKey: 0x37fa_213d, to: &out)
        XCTAssertEqual(out, Self.maskedHello)
    }

    /// §5.7: "Ping request and masked Ping response" — the response is the masked pong.
    func testMaskedPongIsTheRFCExample() {
        XCTAssertEqual(encode(opcode: LeanFrame.pong, Array("Hello".utf8), key: 0x37fa_213d),
                       [0x8a, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])
    }

    /// §5.2 length forms (§5.7: 256 bytes use 126 + 16 bits, 65,536 use 127 + 64 bits) and
    /// §5.3 masking, unmasked again by hand, across the whole-word and tail paths.
    func testLengthFormsAndMaskingRoundTrip() {
        let key: UInt32 = 0xA1B2_C3D4
        let keyBytes: [UInt8] = [0xA1, 0xB2, 0xC3, 0xD4]
        for count in [0, 1, 3, 7, 8, 9, 17, 125, 126, 127, 256, 65_535, 65_536, 70_001] {
            let payload = (0 ..< count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let frame = encode(opcode: LeanFrame.binary, payload, key: key)
            XCTAssertEqual(frame[0], 0x82, "FIN + binary, count \(count)")
            var at = 2
            if count < 126 {
                XCTAssertEqual(frame[1], 0x80 | UInt8(count))
            } else if count <= 65_535 {
                XCTAssertEqual(frame[1], 0x80 | 126)
                XCTAssertEqual(Int(frame[2]) << 8 | Int(frame[3]), count)
                at = 4
            } else {
                XCTAssertEqual(frame[1], 0x80 | 127)
                let length = frame[2 ..< 10].reduce(0) { $0 << 8 | Int($1) }
                XCTAssertEqual(length, count)
                at = 10
            }
            XCTAssertEqual(Array(frame[at ..< at + 4]), keyBytes, "key in network order")
            at += 4
            XCTAssertEqual(frame.count, at + count)
            let unmasked = frame[at...].enumerated().map { $0.element ^ keyBytes[$0.offset % 4] }
            XCTAssertEqual(unmasked, payload, "count \(count)")
        }
        // §5.7: 256 bytes → 0x7E 0x0100; 64 KiB → 0x7F 0x0000000000010000 (masked here).
        XCTAssertEqual(Array(encode(opcode: LeanFrame.binary, [UInt8](repeating: 0, count: 256), key: 0)[0 ..< 4]),
                       [0x82, 0xFE, 0x01, 0x00])
        XCTAssertEqual(Array(encode(opcode: LeanFrame.binary, [UInt8](repeating: 0, count: 65_536), key: 0)[0 ..< 10]),
                       [0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0])
    }

    func testUnmaskedHelloDecodes() throws {
        let (messages, consumed) = try decodeAll(Self.unmaskedHello)
        XCTAssertEqual(messages, [.text("Hello")])
        XCTAssertEqual(consumed, 7)
    }

    func testFragmentedHelloIsReassembled() throws {
        let (messages, consumed) = try decodeAll(Self.fragmentedHello)
        XCTAssertEqual(messages, [.text("Hello")])
        XCTAssertEqual(consumed, Self.fragmentedHello.count)
    }

    /// §5.4: control frames MAY be injected in the middle of a fragmented message.
    func testPingBetweenFragmentsComesFirst() throws {
        let bytes = Array(Self.fragmentedHello[0 ..< 5]) + Self.unmaskedPing + Array(Self.fragmentedHello[5...])
        XCTAssertEqual(try decodeAll(bytes).messages, [.ping(Array("Hello".utf8)), .text("Hello")])
    }

    /// §5.7's 256-byte and 64 KiB unmasked binary messages, and a 3-fragment binary message.
    func testLongBinaryMessagesDecode() throws {
        let small = (0 ..< 256).map { UInt8($0) }
        let big = (0 ..< 65_536).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let bytes: [UInt8] = [0x82, 0x7E, 0x01, 0x00] + small + [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0] + big
            + [0x02, 0x01, 0xAA, 0x00, 0x01, 0xBB, 0x80, 0x01, 0xCC]
        let (messages, consumed) = try decodeAll(bytes)
        XCTAssertEqual(messages, [.binary(small), .binary(big), .binary([0xAA, 0xBB, 0xCC])])
        XCTAssertEqual(consumed, bytes.count)
    }

    /// A stream cut at every offset yields the same messages: a partial frame is not consumed.
    func testEveryCutPointWaitsForTheRest() throws {
        let stream = Self.unmaskedHello + Self.fragmentedHello + Self.unmaskedPing + [0x81, 0x7E, 0x00, 0x80]
            + [UInt8](repeating: 0x61, count: 128)
        let expected: [LeanFrameDecoder.Message] = [.text("Hello"), .text("Hello"), .ping(Array("Hello".utf8)),
                                                    .text(String(repeating: "a", count: 128))]
        for cut in 0 ... stream.count {
            var decoder = LeanFrameDecoder(maxMessage: 1 << 16)
            var messages: [LeanFrameDecoder.Message] = []
            var pending = Array(stream[0 ..< cut])
            for chunk in [Array(stream[cut...]), []] {
                let used = try pending.withUnsafeBufferPointer { buffer throws(LeanWebSocketError) in
                    try decoder.decode(buffer) { messages.append($0) }
                }
                pending.removeFirst(used)
                pending += chunk
            }
            let used = try pending.withUnsafeBufferPointer { buffer throws(LeanWebSocketError) in
                try decoder.decode(buffer) { messages.append($0) }
            }
            XCTAssertEqual(used, pending.count, "cut \(cut)")
            XCTAssertEqual(messages, expected, "cut \(cut)")
        }
    }

    func testCloseBodies() throws {
        XCTAssertEqual(try decodeAll([0x88, 0x00]).messages, [.close(code: nil, reason: "")])
        XCTAssertEqual(try decodeAll([0x88, 0x04, 0x03, 0xE8, 0x6F, 0x6B]).messages, [.close(code: 1000, reason: "ok")])
        XCTAssertEqual(LeanFrame.closePayload(code: 1001, reason: "bye"), [0x03, 0xE9, 0x62, 0x79, 0x65])
        // A long reason is cut to 123 octets on a scalar boundary (control frames ≤ 125, §5.5).
        let long = LeanFrame.closePayload(code: 1000, reason: String(repeating: "é", count: 100))
        XCTAssertEqual(long.count, 2 + 122)
        XCTAssertNotNil(String(validating: long[2...], as: UTF8.self))
    }

    func testViolationsAreTypedErrors() {
        func error(_ bytes: [UInt8], max: Int = 1 << 16) -> LeanWebSocketError? {
            do { _ = try decodeAll(bytes, max: max); return nil } catch { return error }
        }
        XCTAssertEqual(error(Self.maskedHello), .protocolViolation("masked server frame"))
        XCTAssertEqual(error([0xC1, 0x00]), .protocolViolation("reserved bits"))
        XCTAssertEqual(error([0x83, 0x00]), .protocolViolation("reserved opcode 3"))
        XCTAssertEqual(error([0x80, 0x01, 0x61]), .protocolViolation("continuation without a message"))
        XCTAssertEqual(error([0x01, 0x01, 0x61, 0x81, 0x01, 0x62]), .protocolViolation("data frame inside a fragmented message"))
        XCTAssertEqual(error([0x09, 0x00]), .protocolViolation("fragmented control frame"))
        XCTAssertEqual(error([0x89, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126)),
                       .protocolViolation("control frame over 125 octets"))
        XCTAssertEqual(error([0x88, 0x01, 0x03]), .protocolViolation("1-octet close body"))
        XCTAssertEqual(error([0x81, 0x02, 0xC3, 0x28]), .invalidUTF8)
        XCTAssertEqual(error([0x81, 0x05] + Array("Hello".utf8), max: 4), .messageTooBig(5))
        // Too big is refused from the header alone, before the payload arrives.
        XCTAssertEqual(error([0x82, 0x7F, 0, 0, 0, 0, 0, 2, 0, 0], max: 1 << 16), .messageTooBig(131_072))
        XCTAssertEqual(error([0x01, 0x03, 0x61, 0x62, 0x63, 0x80, 0x02, 0x64, 0x65], max: 4), .messageTooBig(5))
        XCTAssertEqual(error([0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 1]), .protocolViolation("64-bit length with the high bit set"))
    }
}
