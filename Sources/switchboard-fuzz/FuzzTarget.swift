/// One fuzz target: a name (also its corpus directory under `Tests/Fuzz/Corpus/`) and the
/// function every input goes through, in libFuzzer mode and in replay/mutation mode alike.
struct FuzzTarget: Sendable {
    let name: String
    /// Textual targets get splices at line boundaries as well as byte-level mutations.
    let isText: Bool
    let run: @Sendable ([UInt8]) throws(FuzzFailure) -> Void

    /// Every target, in the order `all` runs them.
    static let all: [FuzzTarget] = [
        FuzzTarget(name: "rtp", isText: false, run: RTPFuzz.run),
        FuzzTarget(name: "rtcp", isText: false, run: RTCPFuzz.run),
        FuzzTarget(name: "transport-cc", isText: false, run: TransportFeedbackFuzz.run),
        FuzzTarget(name: "stun", isText: false, run: STUNFuzz.run),
        FuzzTarget(name: "sdp", isText: true, run: SDPFuzz.run),
        FuzzTarget(name: "signaling", isText: true, run: SignalingFuzz.run),
        FuzzTarget(name: "dtls-record", isText: false, run: DTLSRecordFuzz.run),
        FuzzTarget(name: "router", isText: false, run: RouterFuzz.run),
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }
}
