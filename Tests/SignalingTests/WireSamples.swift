import CallCore
import Signaling

/// Fixed inputs for every renderer on the hub's per-command path and for the payload hash,
/// through the public API only (so the same file builds into a release driver against an
/// older build, which produced the pinned texts of ``WireBytesTests``). Covers every notice
/// kind, optional fields present and absent, escapes (CRLF, quotes, backslash, control
/// characters, non-ASCII), negative and large numbers.
enum WireSamples {
    static let caller = DeviceKey(account: "alice", device: "laptop")
    static let phone = DeviceKey(account: "bob", device: "phone")
    static let tablet = DeviceKey(account: "bob", device: "tab\"let\\1")
    static let sdp = SessionDescription(sdp: "v=0\r\no=- 46117 2 IN IP4 127.0.0.1\r\ns=\u{1}é\u{1F600}\t-\r\na=ice-ufrag:8hhY\r\n")

    /// One command of each shape the payload hash covers (``WireBytesTests``' `hash.N`).
    static let commandFrames = [
        #"{"v":1,"type":"call.invite","eventID":"e1","callee":"bob","callID":"c1","sdp":"v=0\r\no=- 1\r\n\u00e9\ud83d\ude00","media":"sfu"}"#,
        #"{"v":1,"type":"call.invite","eventID":"e2","callee":"bob"}"#,
        #"{"v":1,"type":"call.answer","eventID":"e3","callID":"c1","revision":12,"sdp":"v=0\r\n"}"#,
        #"{"v":1,"type":"ice.candidate","eventID":"e4","callID":"c1","generation":1,"candidate":"candidate:1 1 udp 2122260223 192.0.2.2 50000 typ host","sdpMid":"0","sdpMLineIndex":0,"ufrag":"8hhY"}"#,
        #"{"v":1,"type":"ice.candidate","eventID":"e5","callID":"c1","generation":0,"candidate":""}"#,
        #"{"v":1,"type":"call.hangup","eventID":"e6","callID":"c1"}"#,
        #"{"v":1,"type":"call.decline","eventID":"e7","callID":"c1","revision":0}"#,
        #"{"v":1,"type":"sdp.offer","eventID":"e8","callID":"c1","generation":4,"sdp":"x"}"#,
        #"{"v":1,"type":"room.ring","eventID":"e9","room":"r1","invitees":["a","b"]}"#,
        #"{"v":1,"type":"sfu.preferences","eventID":"e10","room":"r1","publisher":"alice/laptop","mid":"1","maxWidth":640,"maxHeight":360,"maxLayer":1}"#,
    ]

    static let ringing = CallSnapshot(
        callID: "c1", revision: 2, phase: .ringing, caller: caller, callee: "bob",
        devices: [DeviceEntry(device: caller, participation: .callerDevice),
                  DeviceEntry(device: phone, participation: .ringing),
                  DeviceEntry(device: tablet, participation: .ringingAcknowledged)],
        answeredBy: nil, endReason: nil, endedBy: nil, createdAt: 1_800_000_000_000, endedAt: nil,
        deadlines: CallDeadlines(ring: 1_800_000_060_000, inviteExpiry: 1_800_000_090_000), generation: 0)

    static let ended = CallSnapshot(
        callID: "c2", revision: 9, phase: .ended, caller: caller, callee: "bob",
        devices: [DeviceEntry(device: caller, participation: .callerDevice),
                  DeviceEntry(device: phone, participation: .answered),
                  DeviceEntry(device: tablet, participation: .stopped(.answeredElsewhere)),
                  DeviceEntry(device: DeviceKey(account: "alice", device: "desk"), participation: .inProgressElsewhere)],
        answeredBy: phone, endReason: .hangup, endedBy: caller, createdAt: -5, endedAt: 9_223_372_036_854_775_807,
        deadlines: CallDeadlines(connect: 0, reconnect: -1), generation: 3, media: .sfu)

    static let candidates = [
        IceCandidate(candidate: "candidate:1 1 udp 2122260223 192.0.2.2 50000 typ host", sdpMid: "0", sdpMLineIndex: 0,
                     usernameFragment: "8hhY"),
        IceCandidate(candidate: "candidate:2 1 udp 1686052607 198.51.100.2 60001 typ srflx \"q\""),
    ]

    /// Name and rendered text of each sample.
    static func all() -> [(name: String, text: String)] {
        var out: [(String, String)] = []
        out.append(("snapshot.ringing", SnapshotJSON.render(ringing)))
        out.append(("snapshot.ended", SnapshotJSON.render(ended)))
        out.append(("device", SnapshotJSON.device(tablet)))
        let notices: [(String, CallNotice)] = [
            ("incoming", .incomingCall(ringing, offer: sdp)),
            ("incoming.noSDP", .incomingCall(ringing, offer: nil)),
            ("inProgressElsewhere", .inProgressElsewhere(ended)),
            ("ringingOnCallee", .ringingOnCallee(ringing)),
            ("answered", .answered(ended, by: phone, sdp: sdp)),
            ("answered.noSDP", .answered(ended, by: tablet, sdp: nil)),
            ("stopped", .stopped(.answeredElsewhere, ended)),
            ("ended", .ended(.hangup, ended)),
            ("stateChanged", .stateChanged(ended)),
            ("sdpOffer", .sdpOffer(from: caller, generation: 2, sdp: sdp)),
            ("sdpAnswer", .sdpAnswer(from: tablet, generation: -3, sdp: sdp)),
            ("iceCandidates", .iceCandidates(from: phone, generation: 1, candidates: candidates)),
            ("iceCandidates.empty", .iceCandidates(from: phone, generation: 1, candidates: [])),
        ]
        for (name, notice) in notices {
            out.append(("notice." + name, NoticeJSON.render(notice, callID: "c1", serverTime: 1_800_000_000_123)))
        }
        out.append(("missed", NoticeJSON.missed(ended, for: tablet, serverTime: 7)))
        out.append(("push.incoming", NoticeJSON.push(.incomingCall(callID: "c1", caller: caller, expiresAt: 99), callee: phone).body))
        let frames = commandFrames
        for (n, frame) in frames.enumerated() {
            switch ClientMessage.parse(frame) {
            case .success(.command(let command)): out.append(("hash.\(n)", command.payloadHash))
            case .success(let other): out.append(("hash.\(n)", "not a command: \(other)"))
            case .failure(let error): out.append(("hash.\(n)", "error: \(error)"))
            }
        }
        return out
    }
}
