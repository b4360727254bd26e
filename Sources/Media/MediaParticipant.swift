import DTLS
import ICE
import SDP
import SFU
import SRTP

/// One member's transport and negotiation state inside `SFUServer` (loop thread only).
///
/// Memory (measured, SFUMemoryBenchmarkTests, docs/benchmarks.md "Memory per participant"):
/// OpenSSL's SSL object ≈ 44 KB once connected (record buffers released), libsrtp2's two
/// contexts ≈ 40 KB (AES-GCM) plus 0.4 KB per SSRC; the router's state for the member is
/// larger (bandwidth-estimator send history 192 KB, 40 KB per published video layer).
final class MediaParticipant {
    /// A media section of this member's session, in m-line order (mids never move, RFC 8829
    /// §5.2.2).
    struct Section {
        enum Role {
            /// The member publishes on it (its own offer's send section): recvonly for us.
            case own
            /// We forward `track` of `publisher` on it (sendonly for us); nil: free (inactive),
            /// reusable for the next track of the same kind.
            case forwarded(ForwardKey?)
        }
        struct ForwardKey: Equatable {
            var publisher: ParticipantID
            var track: TrackID
        }
        var mid: String
        var kind: SDP.MediaKind
        var role: Role
        /// Own sections: simulcast rids we receive (re-offered as `a=rid … recv`).
        var receivedRIDs: [String] = []
        /// The member rejected it (port 0 in its offer/answer) or it is not audio/video.
        var rejected = false
    }

    let id: ParticipantID
    let member: MemberID
    let room: String
    var session: ICESessionID
    var localUfrag: String
    var localPassword: String
    var remoteUfrag: String
    let dtls: DTLSEndpoint
    var srtp: SRTPSession?
    /// SDP `o=` session id (constant) and version (bumped per description we send).
    let sdpSessionID: String
    var sdpVersion: UInt64 = 1
    /// Payload types and extension ids this member uses (from its first offer, completed
    /// with the server defaults for codecs it did not offer), for server offers.
    var codecMap: CodecMap
    var extensionIDs: [HeaderExtension.KnownURI: UInt8]
    var sections: [Section] = []
    /// Counter for mids of sections the server adds ("sfu1", "sfu2"…: a prefix no browser
    /// generates, so they never clash with the member's own new mids).
    var nextMid = 0
    /// Published own tracks by mid (TrackID = mid), as last given to the router.
    var published: [String: TrackDescription] = [:]
    /// Where the last DTLS datagram came from (replies before nomination go there).
    var dtlsSource: SocketAddress?

    /// Negotiation (protocol §9): generation of the last server offer, the outstanding one.
    var generation: UInt64 = 0
    var outstandingGeneration: UInt64?
    /// Outgoing SSRCs the outstanding offer carries: forwarding to them starts when the
    /// member answers it (`Router.markNegotiated`; before, its browser cannot demux them).
    var offeredSSRCs: [UInt32] = []
    /// The receive set changed at this time (ms) and no offer covers it yet.
    var dirtySince: Int64?
    var lastChange: Int64 = 0

    /// Its transport-cc extension id (0: not negotiated), where the pacer finds the
    /// transport-wide number of a queued packet. The number itself is the pacer lane's (one
    /// per transport, RFC draft holmer §3: per leg), assigned at egress.
    var transportCCID: UInt8 { extensionIDs[.transportWideCC] ?? 0 }
    var packetsIn: UInt64 = 0
    var bytesIn: UInt64 = 0
    var packetsOut: UInt64 = 0
    var bytesOut: UInt64 = 0

    init(id: ParticipantID, member: MemberID, room: String, session: ICESessionID, localUfrag: String, localPassword: String,
         remoteUfrag: String, dtls: DTLSEndpoint, sdpSessionID: String, codecMap: CodecMap,
         extensionIDs: [HeaderExtension.KnownURI: UInt8]) {
        self.id = id
        self.member = member
        self.room = room
        self.session = session
        self.localUfrag = localUfrag
        self.localPassword = localPassword
        self.remoteUfrag = remoteUfrag
        self.dtls = dtls
        self.sdpSessionID = sdpSessionID
        self.codecMap = codecMap
        self.extensionIDs = extensionIDs
    }

    var isConnected: Bool { srtp != nil }

    /// Marks the receive set changed at `now` (ms).
    func markDirty(now: Int64) {
        if dirtySince == nil { dirtySince = now }
        lastChange = now
    }
}
