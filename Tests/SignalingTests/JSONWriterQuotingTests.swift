import XCTest
@testable import Signaling

/// `JSONWriter.appendQuoted` scans 8 bytes at a time (a SWAR test for bytes that need an
/// escape); this checks it against a plain byte-by-byte RFC 8259 §7 escaper for every byte
/// that needs an escape, at every offset of strings that span several words, next to
/// multi-byte UTF-8 (whose bytes are all ≥ 0x80 and must never be taken for escapes).
final class JSONWriterQuotingTests: XCTestCase {
    /// The reference: byte by byte, the same escapes (`\"`, `\\`, `\n` `\r` `\t`, `\u00XX`
    /// for the other control characters, as the writer has always written them).
    private func reference(_ value: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case 0 ..< 0x20: out += Array(String(format: "\\u%04x", Int(byte)).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }

    private func quoted(_ value: String) -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.appendQuoted(value, to: &out)
        return out
    }

    /// Short values take a plain copy when nothing in them needs an escape
    /// (``JSONWriter/appendPlain(_:to:)``), the word-wise escaper otherwise: a field is the
    /// reference's bytes either way, for every special byte at every offset of values up to
    /// past ``JSONWriter/plainValueLimit``. (Keys are literals; a key that needs an escape is
    /// `ClientMessageTests.testJSONWriterEscapesEveryControlCharacterBetweenLongRuns`'s.)
    func testFieldsAreTheEscapersBytesOnThePlainPathAndOffIt() {
        let specials = (0 ..< 0x20).map { Character(Unicode.Scalar(UInt8($0))) } + ["\"", "\\"]
        for filler in ["a", "é", "€x"] {
            for length in [0, 1, 7, 8, 31, 32, 33, 40] {
                let base = String(repeating: filler, count: length)
                var strings = [base]
                for offset in 0 ... base.count {
                    for special in specials {
                        var text = base
                        text.insert(special, at: text.index(text.startIndex, offsetBy: offset))
                        strings.append(text)
                    }
                }
                for text in strings {
                    var w = JSONWriter()
                    w.field("k", text)
                    let bytes = w.finishBytes()
                    XCTAssertEqual(bytes, Array(#"{"k":"#.utf8) + reference(text) + [UInt8(ascii: "}")],
                                   "\(Array(text.utf8))")
                }
            }
        }
    }

    func testEveryEscapeAtEveryOffsetMatchesTheByteByByteEscaper() {
        let specials = (0 ..< 0x20).map { Character(Unicode.Scalar(UInt8($0))) } + ["\"", "\\"]
        // Fillers: ASCII, and 2- and 3-byte UTF-8 (é, €), so offsets also fall mid-sequence.
        for filler in ["a", "é", "€x"] {
            for length in [0, 1, 7, 8, 9, 15, 16, 17, 24, 31] {
                let base = String(repeating: filler, count: length)
                XCTAssertEqual(quoted(base), reference(base), "filler \(filler) length \(length)")
                let characters = Array(base)
                for offset in 0 ... characters.count {
                    for special in specials {
                        var s = characters
                        s.insert(special, at: offset)
                        let value = String(s)
                        XCTAssertEqual(quoted(value), reference(value), "\(value.debugDescription)")
                    }
                }
            }
        }
    }

    func testEscapesInEveryByteOfAWordAndBackToBack() {
        // Every byte of a 24-byte string needs an escape, in several mixes.
        for value in [String(repeating: "\r\n", count: 12), String(repeating: "\"\\", count: 12),
                      String(repeating: "\u{1F}", count: 24), "\u{7F}\u{80}ÿ\u{20}\u{1F}\"\\~" + String(repeating: "\u{7F}", count: 9)] {
            XCTAssertEqual(quoted(value), reference(value), value.debugDescription)
        }
    }

    func testAppendsAfterExistingBytes() {
        var out = Array("{\"k\":".utf8)
        JSONWriter.appendQuoted("v\n", to: &out)
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "{\"k\":\"v\\n\"")
    }

    /// `escapeOffset` is the index of the first byte below 0x20, `"` or `\` in memory order
    /// (8 if none), also when the SWAR mask flags bytes above it falsely: words mixing those
    /// bytes with their neighbours (0x1F/0x20, 0x21–0x23, 0x5B–0x5D) and bytes ≥ 0x80, at
    /// every position, from a fixed-seed generator.
    func testEscapeOffsetIsTheFirstSpecialByteInEveryMix() {
        let pool: [UInt8] = [0x00, 0x01, 0x0A, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x41, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA2, 0xDC, 0xFF]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0 ..< 200_000 {
            var bytes = [UInt8](repeating: 0, count: 8)
            for k in 0 ..< 8 {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes[k] = pool[Int(state >> 33) % pool.count]
            }
            let expected = bytes.firstIndex { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } ?? 8
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            XCTAssertEqual(JSONWriter.escapeOffset(word), expected, "\(bytes)")
            if JSONWriter.escapeOffset(word) != expected { return }
        }
    }
}
