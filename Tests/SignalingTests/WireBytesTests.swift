import Foundation
import CallCore
@testable import Signaling
import XCTest

/// The exact bytes of everything the hub renders per command, pinned to what the build
/// before the hubswift changes produced (``WireSamples`` and three complete setups through
/// ``HubSetupWorkload``, run against that build's release objects). A change to any renderer,
/// the payload hash or the outbox splice that alters one byte fails here.
final class WireBytesTests: XCTestCase {
    static let expected: [(name: String, text: String)] = [
        ("snapshot.ringing", #"{"callID":"c1","revision":2,"phase":"ringing","caller":{"account":"alice","device":"laptop"},"callee":"bob","createdAt":1800000000000,"generation":0,"media":"p2p","deadlines":{"ring":1800000060000,"inviteExpiry":1800000090000},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"ringing"},{"account":"bob","device":"tab\"let\\1","participation":"ringingAcknowledged"}]}"#),
        ("snapshot.ended", #"{"callID":"c2","revision":9,"phase":"ended","caller":{"account":"alice","device":"laptop"},"callee":"bob","answeredBy":{"account":"bob","device":"phone"},"endReason":"hangup","endedBy":{"account":"alice","device":"laptop"},"createdAt":-5,"endedAt":9223372036854775807,"generation":3,"media":"sfu","deadlines":{"connect":0,"reconnect":-1},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"answered"},{"account":"bob","device":"tab\"let\\1","participation":"stopped","reason":"answeredElsewhere"},{"account":"alice","device":"desk","participation":"inProgressElsewhere"}]}"#),
        ("device", #"{"account":"bob","device":"tab\"let\\1"}"#),
        ("notice.incoming", #"{"v":1,"type":"call.incoming","callID":"c1","revision":2,"serverTime":1800000000123,"snapshot":{"callID":"c1","revision":2,"phase":"ringing","caller":{"account":"alice","device":"laptop"},"callee":"bob","createdAt":1800000000000,"generation":0,"media":"p2p","deadlines":{"ring":1800000060000,"inviteExpiry":1800000090000},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"ringing"},{"account":"bob","device":"tab\"let\\1","participation":"ringingAcknowledged"}]},"sdp":"v=0\r\no=- 46117 2 IN IP4 127.0.0.1\r\ns=\u0001é😀\t-\r\na=ice-ufrag:8hhY\r\n"}"#),
        ("notice.incoming.noSDP", #"{"v":1,"type":"call.incoming","callID":"c1","revision":2,"serverTime":1800000000123,"snapshot":{"callID":"c1","revision":2,"phase":"ringing","caller":{"account":"alice","device":"laptop"},"callee":"bob","createdAt":1800000000000,"generation":0,"media":"p2p","deadlines":{"ring":1800000060000,"inviteExpiry":1800000090000},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"ringing"},{"account":"bob","device":"tab\"let\\1","participation":"ringingAcknowledged"}]}}"#),
        ("notice.inProgressElsewhere", #"{"v":1,"type":"call.inProgressElsewhere","callID":"c1","revision":9,"serverTime":1800000000123,"snapshot":{"callID":"c2","revision":9,"phase":"ended","caller":{"account":"alice","device":"laptop"},"callee":"bob","answeredBy":{"account":"bob","device":"phone"},"endReason":"hangup","endedBy":{"account":"alice","device":"laptop"},"createdAt":-5,"endedAt":9223372036854775807,"generation":3,"media":"sfu","deadlines":{"connect":0,"reconnect":-1},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"answered"},{"account":"bob","device":"tab\"let\\1","participation":"stopped","reason":"answeredElsewhere"},{"account":"alice","device":"desk","participation":"inProgressElsewhere"}]}}"#),
        ("notice.ringingOnCallee", #"{"v":1,"type":"call.ringing","callID":"c1","revision":2,"serverTime":1800000000123,"snapshot":{"callID":"c1","revision":2,"phase":"ringing","caller":{"account":"alice","device":"laptop"},"callee":"bob","createdAt":1800000000000,"generation":0,"media":"p2p","deadlines":{"ring":1800000060000,"inviteExpiry":1800000090000},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"ringing"},{"account":"bob","device":"tab\"let\\1","participation":"ringingAcknowledged"}]}}"#),
        ("notice.answered", #"{"v":1,"type":"call.answered","callID":"c1","revision":9,"serverTime":1800000000123,"by":{"account":"bob","device":"phone"},"sdp":"v=0\r\no=- 46117 2 IN IP4 127.0.0.1\r\ns=\u0001é😀\t-\r\na=ice-ufrag:8hhY\r\n","snapshot":{"callID":"c2","revision":9,"phase":"ended","caller":{"account":"alice","device":"laptop"},"callee":"bob","answeredBy":{"account":"bob","device":"phone"},"endReason":"hangup","endedBy":{"account":"alice","device":"laptop"},"createdAt":-5,"endedAt":9223372036854775807,"generation":3,"media":"sfu","deadlines":{"connect":0,"reconnect":-1},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"answered"},{"account":"bob","device":"tab\"let\\1","participation":"stopped","reason":"answeredElsewhere"},{"account":"alice","device":"desk","participation":"inProgressElsewhere"}]}}"#),
        ("notice.answered.noSDP", #"{"v":1,"type":"call.answered","callID":"c1","revision":9,"serverTime":1800000000123,"by":{"account":"bob","device":"tab\"let\\1"},"snapshot":{"callID":"c2","revision":9,"phase":"ended","caller":{"account":"alice","device":"laptop"},"callee":"bob","answeredBy":{"account":"bob","device":"phone"},"endReason":"hangup","endedBy":{"account":"alice","device":"laptop"},"createdAt":-5,"endedAt":9223372036854775807,"generation":3,"media":"sfu","deadlines":{"connect":0,"reconnect":-1},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"answered"},{"account":"bob","device":"tab\"let\\1","participation":"stopped","reason":"answeredElsewhere"},{"account":"alice","device":"desk","participation":"inProgressElsewhere"}]}}"#),
        ("notice.stopped", #"{"v":1,"type":"call.stopRinging","callID":"c1","revision":9,"serverTime":1800000000123,"reason":"answeredElsewhere","snapshot":{"callID":"c2","revision":9,"phase":"ended","caller":{"account":"alice","device":"laptop"},"callee":"bob","answeredBy":{"account":"bob","device":"phone"},"endReason":"hangup","endedBy":{"account":"alice","device":"laptop"},"createdAt":-5,"endedAt":9223372036854775807,"generation":3,"media":"sfu","deadlines":{"connect":0,"reconnect":-1},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"answered"},{"account":"bob","device":"tab\"let\\1","participation":"stopped","reason":"answeredElsewhere"},{"account":"alice","device":"desk","participation":"inProgressElsewhere"}]}}"#),
        ("notice.ended", #"{"v":1,"type":"call.ended","callID":"c1","revision":9,"serverTime":1800000000123,"reason":"hangup","snapshot":{"callID":"c2","revision":9,"phase":"ended","caller":{"account":"alice","device":"laptop"},"callee":"bob","answeredBy":{"account":"bob","device":"phone"},"endReason":"hangup","endedBy":{"account":"alice","device":"laptop"},"createdAt":-5,"endedAt":9223372036854775807,"generation":3,"media":"sfu","deadlines":{"connect":0,"reconnect":-1},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"answered"},{"account":"bob","device":"tab\"let\\1","participation":"stopped","reason":"answeredElsewhere"},{"account":"alice","device":"desk","participation":"inProgressElsewhere"}]}}"#),
        ("notice.stateChanged", #"{"v":1,"type":"call.state","callID":"c1","revision":9,"serverTime":1800000000123,"phase":"ended","snapshot":{"callID":"c2","revision":9,"phase":"ended","caller":{"account":"alice","device":"laptop"},"callee":"bob","answeredBy":{"account":"bob","device":"phone"},"endReason":"hangup","endedBy":{"account":"alice","device":"laptop"},"createdAt":-5,"endedAt":9223372036854775807,"generation":3,"media":"sfu","deadlines":{"connect":0,"reconnect":-1},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"answered"},{"account":"bob","device":"tab\"let\\1","participation":"stopped","reason":"answeredElsewhere"},{"account":"alice","device":"desk","participation":"inProgressElsewhere"}]}}"#),
        ("notice.sdpOffer", #"{"v":1,"type":"sdp.offer","callID":"c1","serverTime":1800000000123,"generation":2,"from":{"account":"alice","device":"laptop"},"sdp":"v=0\r\no=- 46117 2 IN IP4 127.0.0.1\r\ns=\u0001é😀\t-\r\na=ice-ufrag:8hhY\r\n"}"#),
        ("notice.sdpAnswer", #"{"v":1,"type":"sdp.answer","callID":"c1","serverTime":1800000000123,"generation":-3,"from":{"account":"bob","device":"tab\"let\\1"},"sdp":"v=0\r\no=- 46117 2 IN IP4 127.0.0.1\r\ns=\u0001é😀\t-\r\na=ice-ufrag:8hhY\r\n"}"#),
        ("notice.iceCandidates", #"{"v":1,"type":"ice.candidate","callID":"c1","serverTime":1800000000123,"generation":1,"from":{"account":"bob","device":"phone"},"candidates":[{"candidate":"candidate:1 1 udp 2122260223 192.0.2.2 50000 typ host","sdpMid":"0","sdpMLineIndex":0,"ufrag":"8hhY"},{"candidate":"candidate:2 1 udp 1686052607 198.51.100.2 60001 typ srflx \"q\""}]}"#),
        ("notice.iceCandidates.empty", #"{"v":1,"type":"ice.candidate","callID":"c1","serverTime":1800000000123,"generation":1,"from":{"account":"bob","device":"phone"},"candidates":[]}"#),
        ("missed", #"{"v":1,"type":"call.ended","callID":"c2","revision":9,"serverTime":7,"reason":"answeredElsewhere","missed":true,"snapshot":{"callID":"c2","revision":9,"phase":"ended","caller":{"account":"alice","device":"laptop"},"callee":"bob","answeredBy":{"account":"bob","device":"phone"},"endReason":"hangup","endedBy":{"account":"alice","device":"laptop"},"createdAt":-5,"endedAt":9223372036854775807,"generation":3,"media":"sfu","deadlines":{"connect":0,"reconnect":-1},"devices":[{"account":"alice","device":"laptop","participation":"caller"},{"account":"bob","device":"phone","participation":"answered"},{"account":"bob","device":"tab\"let\\1","participation":"stopped","reason":"answeredElsewhere"},{"account":"alice","device":"desk","participation":"inProgressElsewhere"}]}}"#),
        ("push.incoming", #"{"type":"call.incoming","callID":"c1","caller":"alice","callee":"bob","device":"phone","expiresAt":99}"#),
        // The v2 payload hashes (2026-12-01): stored with every eventID, so they must not
        // change either; the FNV-1a values before them are ``legacyHashes``.
        ("hash.0", #"28b39f705f6d45fb5"#),
        ("hash.1", #"2f836d98e52f0d5dc"#),
        ("hash.2", #"2ab1f6abc36f64be5"#),
        ("hash.3", #"2541eaa50df7b133f"#),
        ("hash.4", #"2758b720a5499d32b"#),
        ("hash.5", #"2f4f52b60b6f38d81"#),
        ("hash.6", #"2f20a0713ed0ff24f"#),
        ("hash.7", #"2bf41a0c68db82acb"#),
        ("hash.8", #"255e97fc16f0fe5a5"#),
        ("hash.9", #"2782f383df85da6b1"#),
    ]

    /// The FNV-1a payload hashes that builds before v2 stored (the `hash.N` values pinned
    /// until 2026-12-01): ``PayloadHash/legacy(_:)`` must keep giving them, or a retry of a
    /// command recorded by such a build would be refused as `eventIDReused`.
    static let legacyHashes = ["4785cda3c2b14118", "20197280fdbba7fb", "003a4b513fa51c1a", "90dc59eea2f0ef5a",
                               "3e57142f6659f2b3", "587a2b649119cef6", "9d9b5080c42a56da", "41bf24ce5ecd4350",
                               "362178d8c033e9dc", "d0a3f58cff9ca753"]

    func testLegacyPayloadHashGivesTheValuesOlderBuildsStored() throws {
        let commands = try WireSamples.commandFrames.map { frame -> ClientCommand in
            guard case .command(let command) = try ClientMessage.parse(frame).get() else { throw WireError.tooDeep }
            return command
        }
        XCTAssertEqual(commands.map { PayloadHash.legacy($0.kind) }, Self.legacyHashes)
        for (command, legacy) in zip(commands, Self.legacyHashes) {
            XCTAssertTrue(PayloadHash.matches(stored: legacy, command), legacy)
        }
    }

    func testEveryRendererAndThePayloadHashGiveThePinnedBytes() {
        let samples = WireSamples.all()
        XCTAssertEqual(samples.map(\.name), Self.expected.map(\.name))
        for (sample, expected) in zip(samples, Self.expected) {
            XCTAssertEqual(sample.text, expected.text, sample.name)
        }
    }

    /// Results (docs/protocol.md §4): an accepted one names the call's phase (and end reason
    /// once ended), a rejected one carries the snapshot, as the protocol's examples show.
    func testResultsCarryThePhaseWhenAcceptedAndTheSnapshotWhenRejected() throws {
        guard case .success(.command(let answer)) = ClientMessage.parse(
            #"{"v":1,"type":"call.answer","eventID":"e-17","callID":"c1","revision":2}"#) else {
            return XCTFail("not a command")
        }
        let snapshot = CallSnapshot(callID: "c1", revision: 3, phase: .connecting, caller: DeviceKey(account: "alice", device: "laptop"),
                                    callee: "bob", devices: [], answeredBy: DeviceKey(account: "bob", device: "phone"),
                                    endReason: nil, endedBy: nil, createdAt: 5, endedAt: nil, deadlines: CallDeadlines(connect: 35),
                                    generation: 1)
        var memo = SnapshotJSONMemo()
        func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }
        XCTAssertEqual(text(ResultJSON.acceptedBytes(answer, callID: "c1", revision: 3, call: .phase(.connecting, endReason: nil),
                                                     noop: false, serverTime: 7, snapshots: &memo)),
                       #"{"v":1,"type":"result","eventID":"e-17","command":"call.answer","callID":"c1","status":"accepted","serverTime":7,"revision":3,"phase":"connecting"}"#)
        XCTAssertEqual(text(ResultJSON.acceptedBytes(answer, callID: "c1", revision: 9, call: .phase(.ended, endReason: .busy),
                                                     noop: true, serverTime: 7, snapshots: &memo)),
                       #"{"v":1,"type":"result","eventID":"e-17","command":"call.answer","callID":"c1","status":"accepted","serverTime":7,"revision":9,"noop":true,"phase":"ended","endReason":"busy"}"#)
        XCTAssertEqual(text(ResultJSON.rejectedBytes(answer, code: "staleRevision", message: "call is at revision 3",
                                                     call: .snapshot(snapshot), serverTime: 7, snapshots: &memo)),
                       #"{"v":1,"type":"result","eventID":"e-17","command":"call.answer","callID":"c1","status":"rejected","serverTime":7,"code":"staleRevision","message":"call is at revision 3","snapshot":"#
                        + SnapshotJSON.render(snapshot) + "}")
    }

    /// Three setups' 75 frames (results, every notice of a setup, outbox frames with their
    /// seq spliced in): one FNV-1a digest over all of them, in order. Re-pinned on 2026-12-02,
    /// when accepted results stopped carrying the snapshot (the notices did not change:
    /// ``testEveryRendererAndThePayloadHashGiveThePinnedBytes``).
    func testThreeSetupsSendThePinnedFrames() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("wirebytes-\(UUID().uuidString)")
        let workload = try HubSetupWorkload(directory: directory)
        defer { workload.close() }
        for _ in 0 ..< 3 { try workload.run(workload.nextSetup(), batchSize: 24) }
        XCTAssertEqual(workload.framesOut, 75)
        XCTAssertEqual(workload.accepted, 36)
        XCTAssertEqual(String(workload.digest, radix: 16), "1998bbc5b845c753")
    }

    /// The outbox splice from stored bytes gives the bytes of the string splice it replaced,
    /// with and without extra fields, for payloads with and without the `{"v":1,` prefix.
    func testOutboxFrameFromBytesMatchesTheStringSplice() {
        let payloads = [#"{"v":1,"type":"call.ended","callID":"c1","sdp":"é😀\r\n"}"#, #"{"v":1,}"#, #"{"v":1,"#,
                        #"{"v":2,"type":"x"}"#, "", "{", #"{"type":"call.incoming"}"#,
                        #"{"v":1,"type":"call.incoming","callID":"c1"}"#]
        for payload in payloads {
            for seq: Int64 in [0, 7, 1_234_567_890_123, .max] {
                for extra: String? in [nil, #""ring":false"#, #""turn":{"username":"u"}"#] {
                    let bytes = Data(payload.utf8)
                    XCTAssertEqual(OutboxFrame.frame(payload: bytes, seq: seq, extra: extra),
                                   OutboxFrame.frame(payload: payload, seq: seq, extra: extra), payload)
                    // A slice whose indices do not start at 0, as a store may hand back.
                    let padded = Data(Array("xx".utf8) + Array(payload.utf8))[2...]
                    XCTAssertEqual(OutboxFrame.frame(payload: padded, seq: seq, extra: extra),
                                   OutboxFrame.frame(payload: payload, seq: seq, extra: extra), payload)
                }
            }
            XCTAssertEqual(OutboxFrame.isIncoming(Data(payload.utf8)), OutboxFrame.isIncoming(payload), payload)
        }
    }

    /// Decimal digits as `String(_:)` writes them, at the edges.
    func testAppendDecimalMatchesStringConversion() {
        for value: Int64 in [0, 1, -1, 9, 10, -10, 99, 100, 1_800_000_000_000, .max, .min, .max - 1, .min + 1] {
            var bytes: [UInt8] = [0x41]
            JSONWriter.appendDecimal(value, to: &bytes)
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "A" + String(value))
        }
    }

    /// The snapshot's `deadlines` object has ``CallDeadlines/pending``'s keys in its order: the
    /// kinds' raw values, which `SnapshotJSON` writes as literals.
    func testSnapshotDeadlineKeysAreTheKindsRawValuesInPendingOrder() {
        let state = CallStateSamples.everyCase()[0]
        let json = SnapshotJSON.render(state.snapshot)
        let expected = "\"deadlines\":{" + state.deadlines.pending.map { "\"\($0.kind.rawValue)\":\($0.at)" }.joined(separator: ",") + "}"
        XCTAssertEqual(state.deadlines.pending.count, DeadlineKind.allCases.count)
        XCTAssertTrue(json.contains(expected), json)
    }

    /// The writer's own buffer grows past its initial capacity (from a capacity of 0, and
    /// with one value far larger than it) and keeps every byte: the same object as the
    /// array-built reference.
    func testWriterGrowsItsBufferWithoutLosingBytes() {
        let long = String(repeating: "ab\"c\n", count: 3_000)
        for capacity in [0, 1, 16, 256] {
            var w = JSONWriter(capacity: capacity)
            for i in 0 ..< 40 { w.field("n", Int64(i) * 1_000_003) }
            w.field("s", long)
            w.field("t", true)
            w.null("z")
            let text = w.finish()
            var reference: [UInt8] = Array("{".utf8)
            for i in 0 ..< 40 { reference += Array("\"n\":\(Int64(i) * 1_000_003),".utf8) }
            reference += Array("\"s\":".utf8)
            JSONWriter.appendQuoted(long, to: &reference)
            reference += Array(",\"t\":true,\"z\":null}".utf8)
            XCTAssertEqual(Array(text.utf8), reference, "capacity \(capacity)")
        }
    }
}
