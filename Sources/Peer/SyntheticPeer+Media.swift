import DTLS
import Foundation
import IO
import RTP
import SRTP

/// The media path of `SyntheticPeer`, all on the loop thread.
extension SyntheticPeer {
    // MARK: - Receive (RFC 7983 demultiplexing by first byte).

    func received(_ bytes: UnsafeRawBufferPointer) {
        guard let first = bytes.first else { return }
        switch first {
        case 20...63:
            guard let dtls else { counters.droppedDatagrams += 1; return }
            handle(dtls.handle(datagram: bytes, now: EventLoop.monotonicMilliseconds()))
        case 128...191:
            guard let srtp, bytes.count >= 2 else { counters.droppedDatagrams += 1; return }
            var packet = Array(bytes)
            if (192...223).contains(bytes[1]) {  // RTCP packet types 192–223 (RFC 5761 §4)
                do { try srtp.unprotectRTCP(&packet) } catch {
                    counters.srtpUnprotectFailures += 1
                    return
                }
                receiveRTCP(packet)
                return
            }
            do { try srtp.unprotectRTP(&packet) } catch {
                counters.srtpUnprotectFailures += 1
                return
            }
            receiveRTP(packet)
        default:
            counters.droppedDatagrams += 1
        }
    }

    func receiveRTP(_ packet: [UInt8]) {
        packet.withUnsafeBytes { raw in
            guard let view = try? RTPPacketView(raw) else {
                counters.droppedDatagrams += 1
                return
            }
            if receiveRetransmission(view) { return }
            let receiver: StreamReceiver
            if let existing = receivers[view.ssrc] {
                receiver = existing
            } else {
                let samples = 48 * configuration.analysisWindowMilliseconds
                receiver = StreamReceiver(ssrc: view.ssrc, payloadType: view.payloadType,
                                          codec: payloadCodecs[view.payloadType], analysisSamples: samples)
                receivers[view.ssrc] = receiver
                attachNACKGenerator(receiver)
            }
            if let label = ssrcLabels[view.ssrc] {
                receiver.mid = label.mid
                receiver.streamID = label.streamID
            }
            receiver.receive(view, nowMicroseconds: EventLoop.monotonicMicroseconds())
        }
    }

    // MARK: - DTLS.

    func handle(_ outputs: [DTLSOutput]) {
        for output in outputs {
            switch output {
            case .send(let bytes):
                send(bytes)
            case .connected(let keys):
                guard let profile = SRTPProfile(rawValue: keys.profile.rawValue) else {
                    fail("unknown SRTP profile \(keys.profile.rawValue)")
                    continue
                }
                do {
                    srtp = try SRTPSession(profile: profile, localKey: keys.localKey, localSalt: keys.localSalt,
                                           remoteKey: keys.remoteKey, remoteSalt: keys.remoteSalt)
                    srtpProfile = keys.profile
                    state = .connected
                    scheduleRTCP()
                    scheduleFeedback()
                    publish()
                } catch {
                    fail("SRTP session: \(error)")
                }
            case .closed:
                fail("DTLS closed by the remote side")
            case .failed(let error):
                fail("DTLS: \(error)")
            case .dropped:
                counters.droppedDatagrams += 1
            }
        }
        scheduleDTLSTimer()
    }

    /// Arms the retransmission timer at the endpoint's next deadline (RFC 6347 §4.2.4).
    func scheduleDTLSTimer() {
        dtlsTimer?.cancel()
        dtlsTimer = nil
        guard let dtls, let deadline = dtls.nextTimeout, state != .closed else { return }
        let delay = max(0, deadline - EventLoop.monotonicMilliseconds())
        dtlsTimer = loop.schedule(afterMilliseconds: delay) { [weak self] in
            guard let self, let dtls = self.dtls else { return }
            self.dtlsTimer = nil
            self.handle(dtls.handleTimeout(now: EventLoop.monotonicMilliseconds()))
        }
    }

    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        let ok = bytes.withUnsafeBytes { nice.send($0) }
        if ok { counters.sentBytes += UInt64(bytes.count) } else { counters.sendFailures += 1 }
        return ok
    }

    // MARK: - Send clock.

    func scheduleSendTick() {
        guard let sender, state != .closed else { return }
        let delay = max(0, sender.nextTick - EventLoop.monotonicMilliseconds())
        sendTimer = loop.schedule(afterMilliseconds: delay) { [weak self] in
            guard let self, self.sender != nil else { return }
            self.sendTick()
            self.scheduleSendTick()
        }
    }

    func sendTick() {
        guard let sender else { return }
        let due: [MediaSender.Outgoing]
        do { due = try sender.due(now: EventLoop.monotonicMilliseconds()) } catch {
            fail("encoder: \(error)")
            return
        }
        counters.skippedFrames = sender.skippedTicks
        // Before DTLS completes the frames are produced (the clock runs) but not sent.
        guard let srtp, state == .connected else { return }
        for item in due {
            guard let parameters = sendParameters[item.mid], parameters.allowed else { continue }
            var extensions: [RTPHeaderExtension] = []
            if let id = parameters.midExtensionID { extensions.append(RTPHeaderExtension(id: id, value: Array(item.mid.utf8))) }
            // RFC 6464 §3 client-to-mixer level, when the remote side accepted the extension.
            if let id = audioLevelExtensionIDs[item.mid], let level = item.audioLevel {
                extensions.append(RTPHeaderExtension(id: id, value: [level.byte]))
            }
            let builder = RTPPacketBuilder(marker: item.marker, payloadType: parameters.payloadType,
                                           sequenceNumber: sender.nextSequenceNumber(for: item.ssrc),
                                           timestamp: item.timestamp, ssrc: item.ssrc, extensions: extensions)
            guard var packet = try? builder.serialize(payload: item.payload) else { continue }
            // Video only: NACK is negotiated for VP8, never for Opus (neither by the SFU nor by browsers).
            if item.codec == .vp8 { rememberSent(packet, ssrc: item.ssrc, sequenceNumber: builder.sequenceNumber) }
            packet.reserveCapacity(packet.count + srtp.profile.rtpOverhead)
            do { try srtp.protectRTP(&packet) } catch {
                counters.sendFailures += 1
                continue
            }
            if send(packet) {
                sender.recordSent(item, nowMicroseconds: EventLoop.monotonicMicroseconds())
                switch item.codec {
                case .opus: counters.sentAudioPackets += 1
                case .vp8:
                    counters.sentVideoPackets += 1
                    if item.marker { counters.sentVideoFrames += 1 }
                }
            }
        }
    }
}
