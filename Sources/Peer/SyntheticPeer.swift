import CNice
import DTLS
import Foundation
import IO
import SDP
import SRTP

/// A scripted WebRTC endpoint for tests and the load tester: a libnice full ICE agent
/// (controlling), an OpenSSL DTLS endpoint, libsrtp2, an Opus encoder fed with a sine tone of
/// its own frequency and optional VP8-shaped video. It offers (or answers a server offer),
/// connects, sends 20 ms Opus frames, decodes what it receives per SSRC and reports it.
/// It repairs loss as a browser does (SyntheticPeer+Retransmission.swift): answers NACKs from
/// a cache of sent video (RTX when negotiated), NACKs gaps of received video, unwraps RTX,
/// and reports residual loss and Opus concealment per stream.
///
/// Threading: everything — the NiceAgent's callbacks, DTLS, SRTP, Opus, the 20 ms send timer —
/// runs on the `EventLoop` passed in (its GMainContext drives libnice). The public methods
/// may be called from any *other* thread; they hop onto the loop and wait. Call `close()`
/// before dropping the peer and before stopping the loop (it releases the agent on the loop
/// thread; a stopped loop would never run it).
public final class SyntheticPeer: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// msid stream id and CNAME base, e.g. "alice/laptop".
        public var name: String
        /// The tone this peer sends, Hz (give each peer its own so receivers can tell them apart).
        public var audioFrequency: Double
        public var sendAudio: Bool
        public var sendVideo: Bool
        /// Video frames per keyframe (25 fps: 50 = every 2 s).
        public var videoKeyframeInterval: Int
        public var opusBitrate: Int32
        /// Regular nomination (as Chromium) or aggressive.
        public var regularNomination: Bool
        /// RFC 7675 consent checks every few seconds (as browsers); off = libnice's 25 s binding
        /// indications, which an ICE-lite server does not count: it would expire us after 30 s.
        public var consentFreshness: Bool
        /// Local addresses libnice gathers host candidates on.
        public var localAddresses: [String]
        public var srtpProfiles: [DTLSSRTPProfile]
        /// How much recent decoded audio each stream keeps for the tone check (RMS over all of
        /// it; frequency from its last 250 ms). 500 ms = 48 KB per received stream: keep it small
        /// for load tests with many subscriptions.
        public var analysisWindowMilliseconds: Int
        /// Loudness of the tone: 0 = digital silence (RFC 6464 level 127, V clear), 1 = the
        /// default tone (about −15 dBov), at most `MediaSender.maximumGain`.
        public var audioGain: Double
        /// Offer RTX (RFC 4588) for video: an RTX SSRC paired by FID, `rtx/90000` apt=VP8; NACKed
        /// packets are then resent as RTX when the answer keeps it, and RTX is taken on receive.
        public var offerRTX = false
        /// NACK gaps of received video (RFC 4585 §6.2.1) with the SFU's `NackGenerator`.
        public var sendNACKs = true
        /// Send every feedback packet (NACK, PLI) from our audio SSRC.
        public var feedbackFromAudioSSRC = false
        /// Send to 127.0.0.1:relayPort instead of the remote's candidates (an impairment relay
        /// forwarding to them; NetEmu's `ImpairmentRelay`).
        public var relayPort: UInt16?
        /// Video as SSRC simulcast (`a=ssrc-group:SIM`) in these layers, lowest first (2–3;
        /// e.g. `SimulcastLayer.chromiumLadder`); empty = one stream. Simulcast video offers
        /// no RTX. Each layer answers PLI/FIR with a keyframe; `setSimulcastLayer(_:paused:)`
        /// pauses one as Chromium does under a low send estimate.
        public var simulcastLayers: [SimulcastLayer] = []

        public init(name: String, audioFrequency: Double = 440, sendAudio: Bool = true, sendVideo: Bool = false,
                    videoKeyframeInterval: Int = 50, opusBitrate: Int32 = OpusAudioEncoder.defaultBitrate,
                    regularNomination: Bool = true, consentFreshness: Bool = true, localAddresses: [String] = ["127.0.0.1"],
                    srtpProfiles: [DTLSSRTPProfile] = [.aeadAES128GCM, .aes128CMHMACSHA180],
                    analysisWindowMilliseconds: Int = 500, audioGain: Double = 1) {
            self.name = name
            self.audioFrequency = audioFrequency
            self.sendAudio = sendAudio
            self.sendVideo = sendVideo
            self.videoKeyframeInterval = videoKeyframeInterval
            self.opusBitrate = opusBitrate
            self.regularNomination = regularNomination
            self.consentFreshness = consentFreshness
            self.localAddresses = localAddresses
            self.srtpProfiles = srtpProfiles
            self.analysisWindowMilliseconds = analysisWindowMilliseconds
            self.audioGain = audioGain
        }
    }

    /// 5 frames (100 ms): after a stall the sender catches up this many frames at once and skips
    /// the rest, as a real capture pipeline drops audio it could not send in time.
    public static let maxCatchUpFrames = 5
    /// 25 fps: video frames go out on every second 20 ms tick (25 fps is a common WebRTC rate
    /// and keeps one timer for both media).
    static let audioTicksPerVideoFrame = 2
    static let videoTimestampStep: UInt32 = 90_000 / 25

    public let configuration: Configuration
    public let loop: EventLoop
    /// Our send tracks (mid "0" audio, then "1" video when enabled).
    public let tracks: [PeerTrack]
    let certificate: DTLSCertificate
    let nice: NiceAgentHandle
    let sessionID = String(UInt64.random(in: 1_000_000_000...9_999_999_999))
    var sessionVersion: UInt64 = 1

    // Loop-thread state.
    var gatheringDone = false
    var remote: RemoteDescription?
    /// Our DTLS role once decided (from the answer's or our answer's a=setup).
    var dtlsRole: DTLSEndpoint.Role?
    var dtls: DTLSEndpoint?
    var dtlsTimer: TimerHandle?
    var srtp: SRTPSession?
    var srtpProfile: DTLSSRTPProfile?
    var iceReady = false
    var state: PeerConnectionState = .new
    var failure: String?
    /// Payload type → codec for everything we may receive (our own offer's and the remote's).
    var payloadCodecs: [UInt8: PeerTrack.Codec] = [111: .opus, 96: .vp8]
    /// SSRC → (mid, stream id) announced by the remote side.
    var ssrcLabels: [UInt32: (mid: String, streamID: String?)] = [:]
    /// Per mid of ours: payload type and mid extension id to send with, and whether we may send.
    var sendParameters: [String: (payloadType: UInt8, midExtensionID: UInt8?, allowed: Bool)] = [:]
    /// Per mid of ours: the RFC 6464 audio-level extension id the remote side accepted.
    var audioLevelExtensionIDs: [String: UInt8] = [:]
    var receivers: [UInt32: StreamReceiver] = [:]
    var sender: MediaSender?
    var sendTimer: TimerHandle?
    var counters = PeerReport(state: .new, failure: nil, srtpProfile: nil, sentAudioPackets: 0, sentVideoPackets: 0,
                              sentVideoFrames: 0, sentBytes: 0, skippedFrames: 0, sendFailures: 0,
                              srtpUnprotectFailures: 0, rtcpPackets: 0, rtcpSent: 0, senderReportsReceived: 0,
                              reportBlocksReceived: 0, roundTripMilliseconds: nil, droppedDatagrams: 0, streams: [])
    var rtcpTimer: TimerHandle?
    /// NACK/RTX/PLI state (SyntheticPeer+Retransmission.swift).
    var repair = RetransmissionState()
    /// Sender SSRC of receiver reports when the peer sends no media (RFC 3550 §6.4.2).
    let receiveOnlySSRC = UInt32.random(in: 1...UInt32.max)

    // Cross-thread: what the blocking waits look at.
    let condition = NSCondition()
    var published: (gathered: Bool, state: PeerConnectionState) = (false, .new)

    /// Creates the agent on `loop` (which must be running) and starts gathering.
    public init(configuration: Configuration, loop: EventLoop) throws(PeerError) {
        self.configuration = configuration
        self.loop = loop
        do { try SRTPLibrary.ensureInitialized() } catch { throw .crypto("srtp_init: \(error)") }
        do { certificate = try DTLSCertificate.generate(commonName: "switchboard-peer") } catch {
            throw .crypto("certificate: \(error)")
        }
        var tracks: [PeerTrack] = []
        let cname = "\(configuration.name)-\(UInt32.random(in: 0...UInt32.max))"
        if configuration.sendAudio {
            tracks.append(PeerTrack(mid: "0", codec: .opus, ssrc: UInt32.random(in: 1...UInt32.max),
                                    streamID: configuration.name, trackID: "audio", cname: cname))
        }
        if configuration.sendVideo {
            let simulcast = configuration.simulcastLayers.count
            guard simulcast <= 3 else { throw .invalidParameter("\(simulcast) simulcast layers (at most 3)") }
            var video = PeerTrack(mid: String(tracks.count), codec: .vp8, ssrc: UInt32.random(in: 1...UInt32.max),
                                  streamID: configuration.name, trackID: "video", cname: cname,
                                  rtxSSRC: configuration.offerRTX && simulcast < 2 ? UInt32.random(in: 1...UInt32.max) : nil)
            if simulcast > 1 {
                var ssrcs = [video.ssrc]
                while ssrcs.count < simulcast {
                    let ssrc = UInt32.random(in: 1...UInt32.max)
                    if !ssrcs.contains(ssrc) { ssrcs.append(ssrc) }
                }
                video.simulcastSSRCs = ssrcs
            }
            tracks.append(video)
        }
        self.tracks = tracks
        let context = loop.glibContext
        let addresses = configuration.localAddresses
        let regular = configuration.regularNomination
        let consent = configuration.consentFreshness
        let created: Result<NiceAgentHandle, PeerError> = Self.runOnLoop(loop) {
            do throws(PeerError) {
                return .success(try NiceAgentHandle(context: context, localAddresses: addresses, regularNomination: regular,
                                                     consentFreshness: consent))
            } catch { return .failure(error) }
        }
        nice = try created.get()
        let started: PeerError? = onLoop { [self] in
            // Weak: a peer dropped without close() must not be called back (the handle outlives
            // it until close()).
            nice.onStateChange = { [weak self] state in self?.componentStateChanged(state) }
            nice.onGatheringDone = { [weak self] in
                self?.gatheringDone = true
                self?.publish()
            }
            nice.onReceive = { [weak self] bytes in self?.received(bytes) }
            do throws(PeerError) { try nice.gather() } catch { return error }
            return nil
        }
        if let started { throw started }
    }

    // MARK: - Negotiation (any thread but the loop's).

    /// Our offer, once host candidates are gathered: every send track (sendrecv); after a
    /// negotiation, every m-line of the session in its order too (RFC 8829 §5.2.2), the
    /// server's forwarded tracks as recvonly.
    public func createOffer(timeout: TimeInterval = 5) throws(PeerError) -> String {
        try waitFor(timeout: timeout, what: "candidate gathering") { $0.gathered }
        let result: Result<String, PeerError> = onLoop { [self] in
            do throws(PeerError) {
                let transport = try localTransport(setup: .actpass)
                sessionVersion += 1
                return .success(PeerSDP.offer(transport: transport, sections: offerSections(), sessionID: sessionID,
                                              sessionVersion: sessionVersion))
            } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Applies the answer to our offer: ICE credentials and candidates go to libnice (checks
    /// start), the fingerprint and `a=setup` decide the DTLS endpoint.
    public func setRemoteAnswer(_ sdp: String) throws(PeerError) {
        let remote = try RemoteDescription(parsing: sdp)
        let role: DTLSEndpoint.Role
        switch remote.setup {
        case .active: role = .server
        case .passive, nil: role = .client
        case .actpass, .holdconn: throw .invalidRemoteDescription("answer with a=setup:\(remote.setup?.rawValue ?? "")")
        }
        let error: PeerError? = onLoop { [self] in
            do throws(PeerError) {
                try apply(remote: remote, role: role)
                return nil
            } catch { return error }
        }
        if let error { throw error }
    }

    /// Answers an offer from the server (RFC 8829 §5.3): our tracks on their mids, recvonly
    /// for the forwarded tracks. The first description (a server-initiated session) also sets
    /// up ICE and DTLS (we take `a=setup:active`, as browsers do); later ones only update
    /// the media (same transport, no ICE restart).
    public func answer(remoteOffer sdp: String, timeout: TimeInterval = 5) throws(PeerError) -> String {
        try waitFor(timeout: timeout, what: "candidate gathering") { $0.gathered }
        let remote = try RemoteDescription(parsing: sdp)
        let result: Result<String, PeerError> = onLoop { [self] in
            do throws(PeerError) {
                let role: DTLSEndpoint.Role = dtlsRole ?? (remote.setup == .active ? .server : .client)
                let transport = try localTransport(setup: role == .client ? .active : .passive)
                sessionVersion += 1
                let answer = try PeerSDP.answer(to: remote.sdp, transport: transport, tracks: tracks,
                                                setup: role == .client ? .active : .passive,
                                                sessionID: sessionID, sessionVersion: sessionVersion,
                                                acceptRTX: configuration.offerRTX)
                try apply(remote: remote, role: role)
                return .success(answer)
            } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Waits until DTLS completed and SRTP keys are installed.
    public func waitUntilConnected(timeout: TimeInterval = 10) throws(PeerError) {
        try waitFor(timeout: timeout, what: "connected") { $0.state == .connected || $0.state == .failed || $0.state == .closed }
        let snapshot = report()
        guard snapshot.state == .connected else {
            throw .invalidState("peer \(snapshot.state.rawValue): \(snapshot.failure ?? "-")")
        }
    }

    /// Starts the 20 ms send clock (media leaves once connected).
    public func startSending() throws(PeerError) {
        let error: PeerError? = onLoop { [self] in
            guard sender == nil else { return nil }
            do throws(PeerError) {
                sender = try MediaSender(tracks: tracks, frequency: configuration.audioFrequency,
                                         bitrate: configuration.opusBitrate,
                                         keyframeInterval: configuration.videoKeyframeInterval,
                                         start: EventLoop.monotonicMilliseconds(), gain: configuration.audioGain,
                                         simulcastLadder: configuration.simulcastLayers)
                scheduleSendTick()
                return nil
            } catch { return error }
        }
        if let error { throw error }
    }

    /// Changes the loudness of the tone from the next 20 ms frame on (0 = silence; the audio
    /// level extension follows). Needs `startSending()` first.
    public func setAudioGain(_ gain: Double) throws(PeerError) {
        let error: PeerError? = onLoop { [self] in
            guard let sender else { return .invalidState("not sending") }
            do throws(PeerError) { try sender.setGain(gain) } catch { return error }
            return nil
        }
        if let error { throw error }
    }

    public func stopSending() {
        onLoop { [self] in
            sendTimer?.cancel()
            sendTimer = nil
            sender = nil
        }
    }

    /// A snapshot of counters and per-SSRC reception. Counters and samples are copied on the
    /// loop; the tone analysis runs on the calling thread, so frequent reports never stall the
    /// send clock. `analyzingTones` false leaves every `tone` nil (cheap polling).
    public func report(analyzingTones: Bool = true) -> PeerReport {
        let (snapshot, samples): (PeerReport, [[Int16]]) = onLoop { [self] in
            var report = counters
            report.repair = repair.counters
            let now = EventLoop.monotonicMicroseconds()
            for receiver in receivers.values { receiver.settle(nowMicroseconds: now) }
            report.state = state
            report.failure = failure
            report.srtpProfile = srtpProfile
            let streams = receivers.values.sorted { $0.ssrc < $1.ssrc }.map(\.reportWithoutTone)
            report.streams = streams.map(\.report)
            return (report, streams.map(\.samples))
        }
        var report = snapshot
        for index in report.streams.indices where analyzingTones && !samples[index].isEmpty {
            report.streams[index].tone = ToneAnalysis(samples: samples[index], sampleRate: 48_000)
        }
        return report
    }

    /// Stops media and timers and releases the agent. Idempotent. `notifyRemote` false
    /// vanishes like a crashed or unplugged device: no DTLS close_notify (RFC 5246 §7.2.1),
    /// so the remote side only notices when ICE consent expires (RFC 7675 §5.1).
    public func close(notifyRemote: Bool = true) {
        onLoop { [self] in
            guard state != .closed else { return }
            sendTimer?.cancel()
            sendTimer = nil
            dtlsTimer?.cancel()
            dtlsTimer = nil
            rtcpTimer?.cancel()
            rtcpTimer = nil
            cancelFeedback()
            sender = nil
            if notifyRemote, let dtls, dtls.state == .connected {
                for output in dtls.close(now: EventLoop.monotonicMilliseconds()) { if case .send(let bytes) = output { send(bytes) } }
            }
            nice.close()
            state = .closed
            publish()
        }
    }

    // MARK: - Loop-thread internals.

    func componentStateChanged(_ raw: UInt32) {
        if raw == NICE_COMPONENT_STATE_READY.rawValue, !iceReady {
            iceReady = true
            if state == .checking { state = .dtlsHandshaking }
            if let dtls, dtls.role == .client {
                handle(dtls.start(now: EventLoop.monotonicMilliseconds()))
            }
        } else if raw == NICE_COMPONENT_STATE_FAILED.rawValue, state != .connected {
            fail("ICE failed")
        }
        publish()
    }

    func fail(_ reason: String) {
        state = .failed
        failure = reason
        publish()
    }

    func publish() {
        condition.lock()
        published = (gatheringDone, state)
        condition.broadcast()
        condition.unlock()
    }

    func waitFor(timeout: TimeInterval, what: String,
                 _ predicate: ((gathered: Bool, state: PeerConnectionState)) -> Bool) throws(PeerError) {
        // Waiting on the loop thread would block the very loop that makes progress.
        guard !loop.isOnLoopThread else { throw .invalidState("blocking call on the peer's loop thread") }
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(published) {
            if !condition.wait(until: deadline) { throw .invalidState("timed out waiting for \(what)") }
        }
    }

    /// Runs `body` on the loop thread and returns its result (inline when already there).
    func onLoop<T>(_ body: @escaping () -> T) -> T { Self.runOnLoop(loop, body) }

    static func runOnLoop<T>(_ loop: EventLoop, _ body: @escaping () -> T) -> T {
        if loop.isOnLoopThread { return body() }
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        loop.execute {
            box.value = body()
            done.signal()
        }
        done.wait()
        guard let value = box.value else { preconditionFailure("loop block did not run") }
        return value
    }
}

final class ResultBox<T> { var value: T? }
