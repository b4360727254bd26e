import CallCore
import Foundation
@testable import Signaling
import Storage
import XCTest

/// The compact outbox form of call events (``StoredNotice``): every notice kind round-trips,
/// renders the very JSON the outbox stored before it, and bad bytes are a typed error.
final class StoredNoticeTests: XCTestCase {
    static let notices: [(String, CallNotice)] = [
        ("incoming", .incomingCall(WireSamples.ringing, offer: WireSamples.sdp)),
        ("incoming.noSDP", .incomingCall(WireSamples.ringing, offer: nil)),
        ("inProgressElsewhere", .inProgressElsewhere(WireSamples.ended)),
        ("ringingOnCallee", .ringingOnCallee(WireSamples.ringing)),
        ("answered", .answered(WireSamples.ended, by: WireSamples.phone, sdp: WireSamples.sdp)),
        ("answered.noSDP", .answered(WireSamples.ended, by: WireSamples.tablet, sdp: nil)),
        ("stopped", .stopped(.answeredElsewhere, WireSamples.ended)),
        ("ended", .ended(.hangup, WireSamples.ended)),
        ("stateChanged", .stateChanged(WireSamples.ended)),
        ("sdpOffer", .sdpOffer(from: WireSamples.caller, generation: 2, sdp: WireSamples.sdp)),
        ("sdpAnswer", .sdpAnswer(from: WireSamples.tablet, generation: -3, sdp: WireSamples.sdp)),
        ("iceCandidates", .iceCandidates(from: WireSamples.phone, generation: 1, candidates: WireSamples.candidates)),
        ("iceCandidates.empty", .iceCandidates(from: WireSamples.phone, generation: 1, candidates: [])),
    ]

    func testEveryKindRoundTripsAndRendersThePinnedJSON() throws {
        let pinned = Dictionary(uniqueKeysWithValues: WireBytesTests.expected.map { ($0.name, $0.text) })
        for (name, notice) in Self.notices {
            let stored = StoredNotice(callID: "c1", serverTime: 1_800_000_000_123, notice: notice)
            let payload = stored.encode()
            XCTAssertTrue(StoredNotice.isCompact(payload), name)
            XCTAssertEqual(StoredNotice.kind(of: payload), stored.kind, name)
            XCTAssertEqual(StoredNotice.callID(of: payload), "c1", name)
            XCTAssertEqual(try StoredNotice.decode(payload), stored, name)
            XCTAssertEqual(String(decoding: stored.renderJSON(), as: UTF8.self), pinned["notice." + name], name)
            XCTAssertEqual(OutboxFrame.frameBytes(json: stored.renderJSON(), seq: 42, extra: "\"ring\":false"),
                           OutboxFrame.frameBytes(payload: Data(stored.renderJSON()), seq: 42, extra: "\"ring\":false"), name)
        }
    }

    /// A snapshot notice is a fraction of its JSON (the outbox rows and WAL pages shrink).
    func testTheCompactFormIsSmallerThanTheJSON() {
        let stored = StoredNotice(callID: "c1", serverTime: 1_800_000_000_123, notice: .stopped(.answeredElsewhere, WireSamples.ended))
        XCTAssertLessThan(stored.encode().count * 3, stored.renderJSON().count)
    }

    func testJSONPayloadsAreNotCompact() {
        let json = Data(#"{"v":1,"type":"room.ringing","room":"r1"}"#.utf8)
        XCTAssertFalse(StoredNotice.isCompact(json))
        XCTAssertNil(StoredNotice.kind(of: json))
        XCTAssertNil(StoredNotice.callID(of: json))
        XCTAssertFalse(StoredNotice.isCompact(Data()))
    }

    /// Every truncation, a trailing byte, an unknown kind and a huge count: `Malformed`,
    /// never a trap.
    func testBadBytesAreATypedError() {
        for (name, notice) in Self.notices {
            let payload = [UInt8](StoredNotice(callID: "c1", serverTime: 5, notice: notice).encode())
            for end in 0 ..< payload.count {
                XCTAssertThrowsError(try StoredNotice.decode(Data(payload[..<end])), "\(name) cut at \(end)") { error in
                    XCTAssertEqual(error as? CompactReader.Malformed, CompactReader.Malformed())
                }
            }
            XCTAssertThrowsError(try StoredNotice.decode(Data(payload + [0])), "\(name) with a trailing byte")
        }
        XCTAssertThrowsError(try StoredNotice.decode(Data([StoredNotice.formatTag, 200, 2, 0x63, 0x31, 0])))
        var w = CompactWriter()
        w.byte(StoredNotice.formatTag)
        w.byte(StoredNotice.Kind.iceCandidates.rawValue)
        w.string("c1"); w.int(0); w.string("bob"); w.string("phone"); w.int(1)
        w.varint(1 << 40)
        XCTAssertThrowsError(try StoredNotice.decode(Data(w.bytes)), "a candidate count past any buffer")
    }
}
