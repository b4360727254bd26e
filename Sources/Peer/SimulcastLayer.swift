/// One simulcast layer the synthetic peer sends on a video track (SSRC simulcast, RFC 5576
/// `a=ssrc-group:SIM`, lowest first, as Chromium's SDP munging and Firefox's pre-rid offers
/// did; the SFU takes a SIM group as the track's layers in order).
///
/// Rates are VP8-shaped frames at 25 fps: `bitrate / 25 / 8` bytes per delta frame and three
/// times that per keyframe (a libvpx keyframe at these sizes is 3–5 × a delta frame).
public struct SimulcastLayer: Sendable, Equatable {
    public var bitrate: Int
    public var width: UInt16
    public var height: UInt16

    public init(bitrate: Int, width: UInt16, height: UInt16) {
        self.bitrate = bitrate
        self.width = width
        self.height = height
    }

    /// Chromium's three-layer ladder for 1280×720 (`kSimulcastFormats` in simulcast.cc: the
    /// low/mid/high target rates ≈ 150 / 500 / 1500 kbit/s at 320×180 / 640×360 / 1280×720).
    public static let chromiumLadder = [
        SimulcastLayer(bitrate: 150_000, width: 320, height: 180),
        SimulcastLayer(bitrate: 500_000, width: 640, height: 360),
        SimulcastLayer(bitrate: 1_500_000, width: 1280, height: 720),
    ]

    /// The same ladder scaled by `factor` (0 < factor ≤ 1) for hosts that cannot push
    /// ≈ 2.2 Mbit/s per publisher through SRTP on loopback beside everything else.
    public static func ladder(scaledBy factor: Double) -> [SimulcastLayer] {
        chromiumLadder.map { SimulcastLayer(bitrate: max(Int(Double($0.bitrate) * factor), 8_000), width: $0.width, height: $0.height) }
    }

    /// Delta frame bytes at 25 fps.
    var deltaFrameBytes: Int { max(bitrate / 25 / 8, 16) }
    var keyframeBytes: Int { 3 * deltaFrameBytes }
}
