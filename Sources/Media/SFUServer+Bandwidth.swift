import Foundation
import SFU

/// Downlink congestion control and simulcast wiring (issue 4): the router decides, this
/// side writes what it decided (probe padding) and exposes the subscriber's layer cap to
/// the signaling layer. Loop thread for the internal calls.
extension SFUServer {
    /// The largest simulcast layer (0 = lowest) `member` wants of `publisher`'s track `mid`
    /// (e.g. from the size of the element it renders in). The completion runs on the loop
    /// thread.
    public func setMaxLayer(member: MemberID, publisher: MemberID, mid: String, layer: Int,
                            completion: @escaping (Result<Void, SFUServerError>) -> Void = { _ in }) {
        onLoop({ [unowned self] in
            guard let subscriber = members[member], let source = members[publisher] else { return completion(.failure(.unknownMember)) }
            do throws(SFUError) {
                try router.setMaxLayer(subscriber: subscriber.id, publisher: source.id, track: TrackID(mid), layer: layer)
                completion(.success(()))
            } catch {
                completion(.failure(.routerRejected(reason: error.code)))
            }
        }, notRunning: { completion(.failure(.notRunning)) })
    }

    /// The size (device pixels) `member` renders `publisher`'s video track `mid` at: the
    /// layer selection stops at the lowest layer covering it (`Router.setMaxSize`).
    public func setMaxSize(member: MemberID, publisher: MemberID, mid: String, width: Int, height: Int,
                           completion: @escaping (Result<Void, SFUServerError>) -> Void = { _ in }) {
        onLoop({ [unowned self] in
            guard let subscriber = members[member], let source = members[publisher] else { return completion(.failure(.unknownMember)) }
            do throws(SFUError) {
                try router.setMaxSize(subscriber: subscriber.id, publisher: source.id, track: TrackID(mid), width: width, height: height)
                completion(.success(()))
            } catch {
                completion(.failure(.routerRejected(reason: error.code)))
            }
        }, notRunning: { completion(.failure(.notRunning)) })
    }

    /// Sends the padding of running bandwidth probes (Router+Probe.swift), each packet with
    /// the subscriber transport's next transport-wide sequence number. Called on the timer.
    func sendProbePadding() {
        probing.removeAll(keepingCapacity: true)
        let now = Self.monotonicMicroseconds()
        router.takeProbingSubscribers(now: now, into: &probing)
        for id in probing {
            let raw = Int(id.raw)
            guard raw < slots.count, let subscriber = slots[raw], let outbound = subscriber.srtp else { continue }
            // Bounded by the probe's byte budget; the cap guards against a logic error only.
            for _ in 0..<1_000 {
                do {
                    // Not paced by the lane's budget: the router spreads the padding at the
                    // probe's own rate over the timer calls (every 5 ms while probing).
                    guard let written = try router.writeProbePadding(subscriber: id, now: now, transportSequenceNumber: pacer.transportSequence(of: id),
                                                                     into: scratch) else { break }
                    _ = pacer.takeTransportSequence(id)
                    if try protectAndSend(scratch, length: written, with: outbound, to: subscriber) { counters.probePadding &+= 1 }
                } catch {
                    counters.forwardErrors &+= 1
                    break
                }
            }
        }
    }
}
