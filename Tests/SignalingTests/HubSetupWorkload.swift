import Auth
import CallCore
import Foundation
import Logging
@testable import Signaling
import Storage

/// The frames of complete call setups as `switchboard bench signaling` sends them
/// (Sources/Bench/BenchPair.swift): invite with a ~3 KB offer → `call.ringing` from each of
/// 3 callee devices → answer with a ~3 KB answer → 2 candidates per side →
/// `call.mediaConnected` per side → hangup; 12 commands per setup. Driven through a real
/// ``SignalingHub`` on a real SQLite file, frames in storage batches as the server runs them
/// (`SQLiteCallStore.batch`).
///
/// Uses the public API only, so the same file also builds outside the test bundle (a
/// release driver linked against the release objects, docs/benchmarks.md "Hub Swift CPU per
/// command"). Every output frame's bytes go into ``digest``: two builds that produce the same
/// digest for the same run sent byte-identical frames.
final class HubSetupWorkload {
    static let secret = Array(repeating: UInt8(7), count: 32)
    static let commandsPerSetup = 12

    let directory: URL
    let store: SQLiteCallStore
    let hub: SignalingHub
    var time = HubTime(wall: 1_800_000_000_000, mono: 10_000)
    /// FNV-1a 64 over every `.send` frame (connection and text) and every other action's
    /// description, in order.
    private(set) var digest: UInt64 = 0xcbf2_9ce4_8422_2325
    private(set) var framesOut = 0
    private(set) var accepted = 0
    private(set) var commands = 0
    private let caller: ConnectionID = 1
    private let callees: [ConnectionID] = [2, 3, 4]
    private let offerJSON: String
    private let answerJSON: String
    private var setupNumber = 0
    private var eventNumber = 0

    init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try SQLiteCallStore(path: directory.appendingPathComponent("db.sqlite").path)
        // No rate limit: the 4 devices send thousands of commands within simulated seconds
        // (the benchmark's 200 pairs spread them over 800 devices).
        hub = SignalingHub(store: store, tokens: TokenSigner(secret: Self.secret), turn: nil,
                           config: HubConfig(commandsPerSecond: 1e9, commandBurst: 1e9),
                           log: Logger(subsystem: "bench", sink: LogSink.collecting(), minimumLevel: .warning))
        offerJSON = Self.jsonEscaped(Self.sdp(ufrag: "bA1x", setup: "actpass"))
        answerJSON = Self.jsonEscaped(Self.sdp(ufrag: "bB1y", setup: "active"))
        let devices: [(ConnectionID, String, String)] = [(1, "alice", "a0"), (2, "bob", "b0"), (3, "bob", "b1"), (4, "bob", "b2")]
        for (id, account, device) in devices {
            hub.connectionOpened(id, time: time)
            let now = time.wall / 1000
            let claims = try TokenClaims(account: account, device: device, issuedAt: now, expiresAt: now + 86_400)
            let token = TokenSigner(secret: Self.secret).mint(claims)
            _ = hub.received(#"{"v":1,"type":"hello","token":"\#(token)"}"#, on: id, time: time)
        }
    }

    func close() {
        store.close()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The 12 frames of the next setup, each with the connection it comes from.
    func nextSetup() -> [(ConnectionID, String)] {
        setupNumber += 1
        let callID = "w-1-\(setupNumber)"
        var frames: [(ConnectionID, String)] = []
        func command(_ from: ConnectionID, _ body: String) {
            eventNumber += 1
            frames.append((from, "{\"v\":1,\"eventID\":\"w-1-\(eventNumber)\"," + body + "}"))
        }
        command(caller, "\"type\":\"call.invite\",\"callID\":\"\(callID)\",\"callee\":\"bob\",\"sdp\":\"\(offerJSON)\"")
        for callee in callees { command(callee, "\"type\":\"call.ringing\",\"callID\":\"\(callID)\"") }
        command(callees[0], "\"type\":\"call.answer\",\"callID\":\"\(callID)\",\"revision\":1,\"sdp\":\"\(answerJSON)\"")
        for (from, ufrag) in [(callees[0], "bB1y"), (caller, "bA1x")] {
            command(from, "\"type\":\"ice.candidate\",\"callID\":\"\(callID)\",\"generation\":1,\"candidate\":\"candidate:1 1 udp 2122260223 192.0.2.2 50000 typ host generation 0 ufrag \(ufrag)\",\"sdpMid\":\"0\",\"sdpMLineIndex\":0,\"ufrag\":\"\(ufrag)\"")
            command(from, "\"type\":\"ice.candidate\",\"callID\":\"\(callID)\",\"generation\":1,\"candidate\":\"candidate:2 1 udp 1686052607 198.51.100.2 60001 typ srflx raddr 192.0.2.1 rport 50000 generation 0 ufrag \(ufrag)\",\"sdpMid\":\"0\",\"sdpMLineIndex\":0,\"ufrag\":\"\(ufrag)\"")
        }
        command(caller, "\"type\":\"call.mediaConnected\",\"callID\":\"\(callID)\"")
        command(callees[0], "\"type\":\"call.mediaConnected\",\"callID\":\"\(callID)\"")
        command(caller, "\"type\":\"call.hangup\",\"callID\":\"\(callID)\"")
        return frames
    }

    /// Runs `frames` through the hub in storage batches of `batchSize` frames, 1 ms apart.
    /// `around` wraps each batch (and nothing else: not the digest of what it sent), so a
    /// caller can meter exactly the hub's and the store's work.
    func run(_ frames: [(ConnectionID, String)], batchSize: Int,
             around: (() throws -> [HubAction]) throws -> [HubAction] = { try $0() }) throws {
        var start = 0
        while start < frames.count {
            let end = min(start + batchSize, frames.count)
            let actions = try around {
                try store.batch { () -> [HubAction] in
                    var actions: [HubAction] = []
                    for (id, text) in frames[start ..< end] {
                        actions += hub.received(text, on: id, time: time)
                        time.wall += 1
                        time.mono += 1
                    }
                    return actions
                }
            }
            commands += end - start
            record(actions)
            start = end
        }
    }

    private static let resultPrefix = Array(#"{"v":1,"type":"result""#.utf8)
    private static let acceptedField = Array(#""status":"accepted""#.utf8)

    private func record(_ actions: [HubAction]) {
        for action in actions {
            switch action {
            case .send(let id, let frame):
                framesOut += 1
                mix(String(id))
                mix(frame.bytes)
                let utf8 = frame.bytes
                if utf8.starts(with: Self.resultPrefix),
                   (0 ... utf8.count - Self.acceptedField.count).contains(where: { utf8[$0 ..< $0 + Self.acceptedField.count].elementsEqual(Self.acceptedField) }) {
                    accepted += 1
                }
            default:
                mix("\(action)")
            }
        }
    }

    private func mix(_ text: String) {
        mix(Array(text.utf8))
    }

    private func mix(_ bytes: [UInt8]) {
        for byte in bytes {
            digest ^= UInt64(byte)
            digest = digest &* 0x0000_0100_0000_01B3
        }
        digest ^= 0x1F
        digest = digest &* 0x0000_0100_0000_01B3
    }

    /// A ~3 KB audio+video SDP body (RFC 8866) shaped like a browser's, lines ending in CRLF.
    static func sdp(ufrag: String, setup: String) -> String {
        let fingerprint = "sha-256 4A:AD:B9:B1:3F:82:18:3B:54:02:12:DF:3E:5D:49:6B:19:E5:7C:AB:4F:3D:E1:73:85:F4:B2:3C:1E:20:89:6D"
        var lines = ["v=0", "o=- 4611731400430051000 2 IN IP4 127.0.0.1", "s=-", "t=0 0", "a=group:BUNDLE 0 1",
                     "a=extmap-allow-mixed", "a=msid-semantic: WMS stream-1"]
        for (mid, media) in [("0", "audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126"),
                             ("1", "video 9 UDP/TLS/RTP/SAVPF 96 97 102 103 104 105 106 107 108 109 127 125")] {
            lines += ["m=\(media)", "c=IN IP4 0.0.0.0", "a=rtcp:9 IN IP4 0.0.0.0", "a=ice-ufrag:\(ufrag)",
                      "a=ice-pwd:asd88fgpdd777uzjYhagZg0Xq7L3UeB2", "a=ice-options:trickle",
                      "a=fingerprint:\(fingerprint)", "a=setup:\(setup)", "a=mid:\(mid)",
                      "a=extmap:2 http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time",
                      "a=extmap:3 http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01",
                      "a=extmap:4 urn:ietf:params:rtp-hdrext:sdes:mid", "a=sendrecv", "a=msid:stream-1 track-\(mid)",
                      "a=rtcp-mux", "a=rtcp-rsize"]
            for pt in 96 ..< 110 {
                lines += ["a=rtpmap:\(pt) VP8/90000", "a=rtcp-fb:\(pt) goog-remb", "a=rtcp-fb:\(pt) transport-cc",
                          "a=rtcp-fb:\(pt) nack pli"]
                if lines.joined(separator: "\r\n").utf8.count > 1_400 * (Int(mid)! + 1) { break }
            }
            lines += ["a=ssrc:100000\(mid) cname:bench1", "a=ssrc:100000\(mid) msid:stream-1 track-\(mid)"]
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// `text` as the inside of a JSON string (RFC 8259 §7), by the hub's own escaper
    /// (the SDPs here hold only CR and LF to escape; `JSONWriterQuotingTests` checks the
    /// escaper against a byte-by-byte one).
    static func jsonEscaped(_ text: String) -> String {
        var quoted: [UInt8] = []
        JSONWriter.appendQuoted(text, to: &quoted)
        return String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self)
    }
}
