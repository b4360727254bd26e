import CallCore
import DTLS
import Foundation
import Media
import Signaling

/// The SFU as the room coordinator's media plane: maps members and errors between the
/// signaling vocabulary (DeviceKey, protocol codes) and the SFU's. The SFU is a worker pool
/// (`media.workers` threads on the one media port; rooms placed on workers).
final class SFUMediaPlane: MediaPlane {
    let sfu: SFUWorkerPool

    init(_ sfu: SFUWorkerPool) {
        self.sfu = sfu
    }

    func join(room: String, member: DeviceKey, offer: String,
              completion: @escaping (Result<MediaAnswer, MediaPlaneError>) -> Void) {
        sfu.join(room: room, member: MemberID(member), offer: offer) { result in
            completion(result.map { MediaAnswer(generation: Int64($0.generation), sdp: $0.sdp) }.mapError(Self.wire))
        }
    }

    func applyAnswer(member: DeviceKey, generation: Int64, sdp: String,
                     completion: @escaping (Result<Void, MediaPlaneError>) -> Void) {
        guard generation >= 0 else { return completion(.failure(Self.wire(.invalidGeneration))) }
        sfu.applyAnswer(member: MemberID(member), generation: UInt64(generation), sdp: sdp) { result in
            completion(result.mapError(Self.wire))
        }
    }

    func leave(member: DeviceKey) {
        sfu.leave(member: MemberID(member))
    }

    func setPreferences(member: DeviceKey, preferences p: SFUPreferences,
                        completion: @escaping (Result<Void, SFUPreferencesError>) -> Void) {
        // In range by the hub's check (≤ 16383, ≤ 2): the conversions cannot trap.
        if let problem = p.problem { return completion(.failure(problem)) }
        sfu.setPreferences(member: MemberID(member), publisher: MemberID(p.publisher), mid: p.mid, maxWidth: Int(p.maxWidth),
                           maxHeight: Int(p.maxHeight), maxLayer: p.maxLayer.map { Int($0) }) { result in
            completion(result.mapError(Self.wire))
        }
    }

    /// Media-plane refusals of a preference as `sfu.preferences` codes (§9).
    static func wire(_ error: SFUPreferenceError) -> SFUPreferencesError {
        switch error {
        case .noSession: return .notInRoom
        case .unknownPublisher: return .unknownPublisher
        case .unknownTrack: return .unknownTrack
        case .badSize: return .badSize
        case .badLayer: return .badLayer
        case .notRunning: return .mediaUnavailable
        }
    }

    func setCallbacks(onOffer: @escaping (DeviceKey, Int64, String) -> Void,
                      onMemberLeft: @escaping (DeviceKey, String) -> Void,
                      onActiveSpeaker: @escaping (String, DeviceKey?) -> Void) {
        sfu.onActiveSpeaker = { room, member in onActiveSpeaker(room, member.map(DeviceKey.init)) }
        sfu.onOffer = { member, generation, sdp in onOffer(DeviceKey(member), Int64(generation), sdp) }
        sfu.onMemberLeft = { _, member, reason in
            // `.left` is the echo of our own leave; the coordinator already handled it.
            guard reason != .left else { return }
            onMemberLeft(DeviceKey(member), reason.wireReason)
        }
    }

    /// SFU errors as protocol v1 rejection codes (docs/protocol.md §4, §9).
    static func wire(_ error: SFUServerError) -> MediaPlaneError {
        switch error {
        case .invalidSDP(let reason): return MediaPlaneError(code: "invalidSDP", message: reason)
        case .badFingerprint: return MediaPlaneError(code: "invalidSDP", message: "the offer's DTLS fingerprint is missing or malformed")
        case .iceRejected(let reason): return MediaPlaneError(code: "invalidSDP", message: "ICE credentials: \(reason)")
        case .routerRejected(let reason): return MediaPlaneError(code: "invalidSDP", message: "tracks: \(reason)")
        case .unknownMember: return MediaPlaneError(code: "notInRoom", message: "no media session for this device; send sfu.offer first")
        case .wrongRoom: return MediaPlaneError(code: "wrongRoom", message: "this device's media session belongs to another room")
        case .invalidGeneration: return MediaPlaneError(code: "invalidGeneration", message: "the server offer of that generation is not current")
        case .glare: return MediaPlaneError(code: "glare", message: "the server's offer is outstanding; answer it, then offer again")
        case .notRunning: return MediaPlaneError(code: "mediaUnavailable", message: "the media plane is not running")
        }
    }
}

extension MemberID {
    init(_ key: DeviceKey) { self.init(account: key.account, device: key.device) }
}

extension DeviceKey {
    init(_ member: MemberID) { self.init(account: member.account, device: member.device) }
}

extension ServerConfig.Media {
    /// Worker threads: `media.workers`, or one per online CPU.
    var workerCount: Int { workers ?? SFUWorkerPool.onlineProcessors }

    /// The SFU's configuration from the config file's `media.*` keys.
    func sfuConfiguration() throws -> MediaConfiguration {
        var announcedHost: String?
        var announcedPort: UInt16?
        if let announced = announcedAddress {
            // "host:port" for IPv4/DNS names, "[v6]:port" or a bare address otherwise.
            if announced.hasPrefix("["), let close = announced.firstIndex(of: "]") {
                announcedHost = String(announced[announced.index(after: announced.startIndex)..<close])
                let rest = announced[announced.index(after: close)...]
                if rest.hasPrefix(":") { announcedPort = UInt16(rest.dropFirst()) }
            } else if announced.filter({ $0 == ":" }).count == 1, let colon = announced.firstIndex(of: ":") {
                announcedHost = String(announced[..<colon])
                announcedPort = UInt16(announced[announced.index(after: colon)...])
            } else {
                announcedHost = announced
            }
        }
        var certificate: DTLSCertificate?
        if let certificateFile, let keyFile {
            certificate = try DTLSCertificate(pemCertificate: String(contentsOfFile: certificateFile, encoding: .utf8),
                                              pemKey: String(contentsOfFile: keyFile, encoding: .utf8))
        }
        return MediaConfiguration(host: host, port: port, announcedHost: announcedHost, announcedPort: announcedPort,
                                  certificate: certificate, consentTimeoutMilliseconds: consentTimeout.milliseconds)
    }
}
