import Foundation
@testable import Signaling
import XCTest

/// The frame scanner must read what `JSONDecoder` reads, or step aside (nil) so the decoder
/// decides; and it must take the frames devices send, or it saves nothing.
final class RawFrameScanTests: XCTestCase {
    private func decoded(_ text: String) -> RawFrame? {
        try? JSONDecoder().decode(RawFrame.self, from: Data(text.utf8))
    }

    /// Frames as the protocol's clients write them: all read by the scanner, same values.
    func testDeviceFramesAreScannedAsTheDecoderReadsThem() throws {
        let sdp = "v=0\r\no=- 4611731400430051336 2 IN IP4 127.0.0.1\r\ns=-\r\na=ice-ufrag:8hhY\r\na=fmtp:111 minptime=10;useinbandfec=1\r\n"
        var sdpJSON: [UInt8] = []
        JSONWriter.appendQuoted(sdp, to: &sdpJSON)
        let frames = [
            #"{"v":1,"type":"hello","token":"abc.def.ghi","cursor":"42"}"#,
            #"{"v":1,"type":"ping"}"#,
            #"{"type":"ack","cursor":"7"}"#,
            #"{"v":1,"type":"call.invite","eventID":"e-1","callee":"bob","sdp":"# + String(decoding: sdpJSON, as: UTF8.self) + "}",
            #"{"v":1,"type":"call.answer","eventID":"e-2","callID":"c1","revision":3,"sdp":"# + String(decoding: sdpJSON, as: UTF8.self) + "}",
            #"{"v":1,"type":"ice.candidate","eventID":"e-3","callID":"c1","generation":1,"candidate":"candidate:1 1 udp 2122260223 192.0.2.1 5000 typ host","sdpMid":"0","sdpMLineIndex":0,"ufrag":"8hhY"}"#,
            #"{"v":1,"type":"ice.candidate","eventID":"e-4","callID":"c1","generation":1,"candidate":"","sdpMid":null,"sdpMLineIndex":null}"#,
            #"{"v":1,"type":"room.ring","eventID":"e-5","room":"r1","invitees":["a","b"]}"#,
            #"{"v":1,"type":"room.ring","eventID":"e-6","room":"r1","invitees":[]}"#,
            " {\n\t\"v\" : 1 ,\r\n \"type\":\"call.hangup\" , \"eventID\":\"e-7\",\"callID\":\"c1\" } \n",
            #"{"v":1,"type":"call.ringing","eventID":"e-8","callID":"c1","extra":"ignored","n":5,"flag":true,"z":false,"nothing":null}"#,
            #"{"type":"call.invite","eventID":"e\u002d9","callee":"b\u00f6b \ud83d\ude00 \/ \\ \" \b\f\n\r\t"}"#,
            #"{"v":-1,"revision":-9223372036854775808,"generation":9223372036854775807,"type":"x"}"#,
            #"{}"#,
        ]
        for frame in frames {
            let scanned = RawFrame.scan(Array(frame.utf8))
            XCTAssertNotNil(scanned, frame)
            XCTAssertEqual(scanned, decoded(frame), frame)
        }
        XCTAssertEqual(RawFrame.scan(Array(frames[3].utf8))?.sdp, sdp)
    }

    /// Every escape at every offset of literals 0–31 bytes long, so that escapes fall on
    /// every byte of the 8-byte words the scanner skips whole: read as the decoder reads
    /// them, and the `sdp` literal reported for reuse exactly when it is the writer's form.
    func testEscapesAtEveryOffsetAcrossWordsAreScannedAsTheDecoderReadsThem() throws {
        let escapes = [#"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#, #"\u0001"#, #"\u001f"#,
                       #"\u001F"#, #"\u000a"#, #"\u00e9"#, #"\ud83d\ude00"#, "é", #"\r\n"#]
        var reused = 0
        for filler in ["a", "é"] {
            for length in [0, 1, 6, 7, 8, 9, 15, 16, 17, 24, 31] {
                let characters = Array(String(repeating: filler, count: length))
                for offset in 0 ... characters.count {
                    for escape in escapes {
                        let literal = String(characters[..<offset]) + escape + String(characters[offset...])
                        let frame = #"{"type":"x","sdp":""# + literal + #"","eventID":"e"}"#
                        let bytes = Array(frame.utf8)
                        var quoted: [UInt8]?
                        let scanned = bytes.withUnsafeBufferPointer { RawFrame.scan($0, quotedSDP: &quoted) }
                        XCTAssertNotNil(scanned, frame)
                        XCTAssertEqual(scanned, decoded(frame), frame)
                        let sdp = try XCTUnwrap(scanned?.sdp)
                        var writer: [UInt8] = []
                        JSONWriter.appendQuoted(sdp, to: &writer)
                        let sent = Array(("\"" + literal + "\"").utf8)
                        XCTAssertEqual(quoted, sent == writer ? sent : nil, frame)
                        if quoted != nil { reused += 1 }
                    }
                }
            }
        }
        XCTAssertGreaterThan(reused, 0)
    }

    /// Inputs the scanner must leave to the decoder (nil), whatever the decoder then says.
    func testUnusualOrInvalidInputIsLeftToTheDecoder() {
        let frames = [
            "", " ", "[]", "null", "\"s\"", "{", "}", "{\"type\"}", "{\"type\":}", "{\"type\":\"a\",}", "{,}",
            #"{"type":"a"} x"#, #"{"type":"a"}{"#, #"{"type":"a" "eventID":"b"}"#,
            #"{"type":"a","type":"b"}"#, #"{"x":1,"x":2}"#,
            #"{"v":1.0}"#, #"{"v":1e0}"#, #"{"v":01}"#, #"{"v":-0}"#, #"{"v":"1"}"#, #"{"v":true}"#,
            #"{"revision":9223372036854775808}"#, #"{"type":1}"#, #"{"invitees":"a"}"#, #"{"invitees":[1]}"#,
            #"{"invitees":["a",]}"#, #"{"extra":{"nested":1}}"#, #"{"extra":[1]}"#, #"{"extra":tru}"#,
            "{\"type\":\"a\tb\"}", #"{"type":"\x"}"#, #"{"type":"\u12"}"#, #"{"type":"\ud83d"}"#,
            #"{"type":"\ude00"}"#, #"{"type":"\ud83d\u0041"}"#, #"{"type":"unterminated}"#,
            "\u{FEFF}{\"type\":\"a\"}",
        ]
        for frame in frames {
            XCTAssertNil(RawFrame.scan(Array(frame.utf8)), frame)
        }
    }

    /// Keys are matched on their bytes when they have no escape, through the unescaped
    /// string when they do: either way a field is the same field, near misses are unknown
    /// keys, and a field named twice (once escaped) is left to the decoder.
    func testKeysWithAndWithoutEscapesNameTheSameFields() {
        let read = [
            #"{"\u0074ype":"call.hangup","event\u0049D":"e-1","callID":"c1"}"#,
            #"{"type":"call.hangup","eventID":"e-1","callID":"c1"}"#,
            #"{"type":"x","typ":"a","types":"b","Type":"c","V":2,"sdpMLineIndexX":1,"t\u00ffpe":"d","sdpMLineIndex":3}"#,
            #"{"type":"x","maxLayer":1,"maxWidth":2,"maxHeight":3,"mid":"m","sdp":"s","room":"r","track":"t","token":"k"}"#,
        ]
        for frame in read {
            let scanned = RawFrame.scan(Array(frame.utf8))
            XCTAssertNotNil(scanned, frame)
            XCTAssertEqual(scanned, decoded(frame), frame)
        }
        XCTAssertEqual(RawFrame.scan(Array(read[0].utf8)), RawFrame.scan(Array(read[1].utf8)))
        XCTAssertEqual(RawFrame.scan(Array(read[2].utf8))?.sdpMLineIndex, 3)
        XCTAssertEqual(RawFrame.scan(Array(read[3].utf8))?.maxHeight, 3)
        for twice in [#"{"type":"a","\u0074ype":"b"}"#, #"{"x\u0031":1,"x1":2}"#] {
            XCTAssertNil(RawFrame.scan(Array(twice.utf8)), twice)
        }
    }

    /// Randomly mangled valid frames: whenever the scanner answers, the decoder agrees.
    func testScannerNeverDisagreesWithTheDecoderOnMangledFrames() {
        let base = Array(#"{"v":1,"type":"ice.candidate","eventID":"e-3","callID":"c1","generation":12,"candidate":"a\"b\\c\u00e9","sdpMid":"0","sdpMLineIndex":0,"extra":"x","n":null}"#.utf8)
        let alphabet = Array(#"{}[]:,"\ u0123456789abcdefnrt-.eE"#.utf8) + [0x0A, 0x01]
        var generator = SystemRandomNumberGenerator()
        var scannedCount = 0
        for _ in 0 ..< 3_000 {
            var bytes = base
            for _ in 0 ..< Int.random(in: 1 ... 3, using: &generator) {
                let position = Int.random(in: 0 ..< bytes.count, using: &generator)
                switch Int.random(in: 0 ..< 3, using: &generator) {
                case 0: bytes[position] = alphabet.randomElement(using: &generator)!
                case 1: bytes.remove(at: position)
                default: bytes.insert(alphabet.randomElement(using: &generator)!, at: position)
                }
            }
            guard let text = String(validating: bytes, as: UTF8.self) else { continue }
            if let scanned = RawFrame.scan(bytes) {
                scannedCount += 1
                XCTAssertEqual(scanned, decoded(text), text)
                // ClientMessage.parse skips the depth check for scanned frames.
                XCTAssertLessThanOrEqual(JSONShape.depth(of: bytes), 2, text)
            }
        }
        XCTAssertGreaterThan(scannedCount, 0)
    }
}
