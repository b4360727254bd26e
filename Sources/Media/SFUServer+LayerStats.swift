import Foundation
import SFU

/// Per-layer figures of every published video/audio track and per-subscriber layer choice,
/// for `/metrics` (simulcast: which layers arrive, which one each subscriber gets).
public struct SFUTrackLayerStats: Equatable, Sendable {
    public struct Layer: Equatable, Sendable {
        public var layer: Int
        public var rid: String?
        public var ssrc: UInt32?
        public var packets: UInt64
        public var bytes: UInt64
        public var keyframes: UInt64
    }

    public struct Subscriber: Equatable, Sendable {
        public var member: MemberID
        /// Layer being forwarded (nil until the target layer's first keyframe).
        public var currentLayer: Int?
        public var targetLayer: Int
        public var layerSwitches: UInt64
        public var bytesSent: UInt64
    }

    public var publisher: MemberID
    /// The publisher's mid of the track.
    public var track: String
    public var kind: String
    public var layers: [Layer]
    public var subscribers: [Subscriber]
}

extension SFUServer {
    /// Blocking snapshot of every published track's layers (any thread but the loop's own).
    public func layerStats() -> [SFUTrackLayerStats] {
        if isOnLoopThread || !isRunning { return layerSnapshot() }
        let done = DispatchSemaphore(value: 0)
        var result: [SFUTrackLayerStats] = []
        onLoop({ [unowned self] in
            result = layerSnapshot()
            done.signal()
        }, notRunning: { done.signal() })
        done.wait()
        return result
    }

    func layerSnapshot() -> [SFUTrackLayerStats] {
        var out: [SFUTrackLayerStats] = []
        for publisher in members.values.sorted(by: { $0.id < $1.id }) {
            for mid in publisher.published.keys.sorted() {
                guard let track = router.trackStats(publisher.id, track: TrackID(mid)) else { continue }
                let layers = track.streams.map {
                    SFUTrackLayerStats.Layer(layer: $0.layer, rid: $0.rid, ssrc: $0.ssrc, packets: $0.packets, bytes: $0.bytes,
                                             keyframes: $0.keyframes)
                }
                var subscribers: [SFUTrackLayerStats.Subscriber] = []
                for subscriber in members.values.sorted(by: { $0.id < $1.id }) where subscriber.id != publisher.id {
                    guard let s = router.subscriptionStats(subscriber: subscriber.id, publisher: publisher.id, track: TrackID(mid))
                    else { continue }
                    subscribers.append(.init(member: subscriber.member, currentLayer: s.currentLayer, targetLayer: s.targetLayer,
                                             layerSwitches: s.layerSwitches, bytesSent: s.bytesSent))
                }
                out.append(SFUTrackLayerStats(publisher: publisher.member, track: mid, kind: track.kind == .video ? "video" : "audio",
                                              layers: layers, subscribers: subscribers))
            }
        }
        return out
    }
}

extension SFUWorkerPool {
    /// Every worker's tracks (a room lives on one worker, so no track appears twice).
    /// Blocking; from any thread but a worker's loop.
    public func layerStats() -> [SFUTrackLayerStats] {
        workers.flatMap { $0.layerStats() }
    }
}
