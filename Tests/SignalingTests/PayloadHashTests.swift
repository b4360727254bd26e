@testable import Signaling
import XCTest

/// The payload hash (v2, word-wise): its format, field boundaries, single-word changes, and
/// the compatibility with records of builds that stored FNV-1a (``PayloadHash/matches(stored:_:)``).
final class PayloadHashTests: XCTestCase {
    private func command(_ frame: String) throws -> ClientCommand {
        guard case .command(let command) = try ClientMessage.parse(frame).get() else { throw WireError.tooDeep }
        return command
    }

    private func words(_ fields: [String]) -> UInt64 {
        var hash = PayloadHash.Words()
        for field in fields { hash.mix(field) }
        return hash.value
    }

    func testFormatIsVersionDigitAndSixteenHexDigits() throws {
        for frame in WireSamples.commandFrames {
            let hash = try command(frame).payloadHash
            XCTAssertEqual(hash.utf8.count, 17, hash)
            XCTAssertTrue(hash.hasPrefix("2"), hash)
            XCTAssertTrue(hash.dropFirst().allSatisfy { "0123456789abcdef".contains($0) }, hash)
        }
    }

    func testFieldBoundariesAndEmptyFieldsCount() {
        XCTAssertNotEqual(words(["ab", "c"]), words(["a", "bc"]))
        XCTAssertNotEqual(words(["abcdefgh", ""]), words(["", "abcdefgh"]))
        XCTAssertNotEqual(words([""]), words(["", ""]))
        XCTAssertNotEqual(words(["\0"]), words([""]), "a NUL tail byte is not the empty tail")
        XCTAssertNotEqual(words(["12345678"]), words(["1234567", "8"]))
    }

    /// Every single-bit change of a 3 KB field, at every byte (the low and the high bit of
    /// each), hashes apart from the original and from each other.
    func testEverySingleBitFlipOfAnSDPSizedFieldHashesApart() {
        var bytes = [UInt8]((0 ..< 3_000).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        let original = words([String(decoding: bytes, as: UTF8.self), "tail"])
        var seen: Set<UInt64> = [original]
        for index in bytes.indices {
            for bit: UInt8 in [0x01, 0x40] {
                bytes[index] ^= bit
                let hash = words([String(decoding: bytes, as: UTF8.self), "tail"])
                bytes[index] ^= bit
                XCTAssertTrue(seen.insert(hash).inserted, "byte \(index) bit \(bit)")
            }
        }
    }

    /// The top bit of two consecutive words flipped together: with FNV's xor-multiply done
    /// word-wise the two flips cancel (2^63 · odd = 2^63); the rotation keeps them apart.
    func testTopBitFlipsOfConsecutiveWordsDoNotCancel() {
        let a = [UInt8](repeating: 0x41, count: 16)
        var b = a
        b[7] ^= 0x80
        b[15] ^= 0x80
        let textA = String(decoding: a, as: UTF8.self), textB = String(decoding: b, as: UTF8.self)
        XCTAssertNotEqual(words([textA]), words([textB]))
    }

    func testMatchesItsOwnHashAndALegacyRecordOfTheSameCommandOnly() throws {
        let hangup = try command(#"{"v":1,"type":"call.hangup","eventID":"e1","callID":"c1"}"#)
        let other = try command(#"{"v":1,"type":"call.hangup","eventID":"e1","callID":"c2"}"#)
        XCTAssertTrue(PayloadHash.matches(stored: hangup.payloadHash, hangup))
        XCTAssertTrue(PayloadHash.matches(stored: PayloadHash.legacy(hangup.kind), hangup))
        XCTAssertFalse(PayloadHash.matches(stored: other.payloadHash, hangup))
        XCTAssertFalse(PayloadHash.matches(stored: PayloadHash.legacy(other.kind), hangup))
        // The v2 digits without the version are not a legacy record of the command.
        XCTAssertFalse(PayloadHash.matches(stored: String(hangup.payloadHash.dropFirst()), hangup))
        XCTAssertFalse(PayloadHash.matches(stored: "", hangup))
    }
}
