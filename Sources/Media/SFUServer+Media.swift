import DTLS
import Glibc
import ICE
import RTP
import SFU
import SRTP

/// The media path: DTLS handshakes, SRTP in/out, forwarding, RTCP, ICE events, timers.
/// Loop thread only.
extension SFUServer {
    // MARK: DTLS

    func handleDTLS(_ session: ICESessionID, _ bytes: UnsafeRawBufferPointer, now: Int64) {
        guard let participant = bySession[session] else { return }
        participant.dtlsSource = loop.currentSource
        let outputs = participant.dtls.handle(datagram: bytes, now: now)
        process(outputs, of: participant, now: now)
    }

    func process(_ outputs: [DTLSOutput], of participant: MediaParticipant, now: Int64) {
        for output in outputs {
            switch output {
            case .send(let datagram):
                datagram.withUnsafeBytes { bytes in
                    if loop.ice.selectedAddress(of: participant.session) != nil {
                        loop.send(bytes, to: participant.session)
                    } else if let source = participant.dtlsSource {
                        loop.send(bytes, to: source)  // before nomination: back to the ClientHello's source
                    }
                }
            case .connected(let keys):
                handshaking[ObjectIdentifier(participant)] = nil
                guard let profile = SRTPProfile(rawValue: keys.profile.rawValue),
                      let srtp = try? SRTPSession(profile: profile, localKey: keys.localKey, localSalt: keys.localSalt,
                                                  remoteKey: keys.remoteKey, remoteSalt: keys.remoteSalt)
                else {
                    counters.dtlsFailures &+= 1
                    remove(participant, reason: .dtlsFailed, now: now)
                    return
                }
                participant.srtp = srtp
                counters.dtlsConnected &+= 1
                onMemberJoined(participant.room, participant.member)
            case .closed:
                remove(participant, reason: .dtlsClosed, now: now)
                return
            case .failed:
                counters.dtlsFailures &+= 1
                remove(participant, reason: .dtlsFailed, now: now)
                return
            case .dropped:
                counters.dtlsDropped &+= 1
            }
        }
    }

    // MARK: RTP

    /// SRTP in → router → per subscriber: write, pace (send now or queue in the pacer), protect, queue for sendmmsg. No allocation.
    func handleRTP(_ session: ICESessionID, _ bytes: UnsafeRawBufferPointer) {
        guard let participant = bySession[session] else { return }
        guard let srtp = participant.srtp else {
            counters.mediaBeforeKeys &+= 1
            return
        }
        counters.rtpIn &+= 1
        participant.packetsIn &+= 1
        participant.bytesIn &+= UInt64(bytes.count)
        // The datagram lives in the loop's receive slot, ours until the handler returns.
        let buffer = UnsafeMutableRawBufferPointer(mutating: bytes)
        let length: Int
        do { length = try srtp.unprotectRTP(buffer, length: bytes.count) } catch {
            countSRTP(error)
            return
        }
        let now = Self.monotonicMicroseconds()
        let disposition = router.handleRTP(from: participant.id, packet: UnsafeRawBufferPointer(rebasing: bytes[0..<length]),
                                           now: now, arrival: loop.currentArrivalMicros, into: &batch)
        switch disposition {
        case .forwarded: break
        case .malformed: counters.rtpMalformed &+= 1; return
        case .unknownSSRC: counters.unknownSSRC &+= 1; return
        case .unknownPayloadType: counters.unknownPayloadType &+= 1; return
        case .unknownParticipant, .muted, .retransmission, .duplicate: return
        }
        // Audio never waits behind video (`Pacer`): it bypasses the queues.
        let packetClass: PacketClass = router.lastRoutedKind == .audio ? .audio : .video
        var queued = false
        for index in 0..<batch.count {
            let forward = batch[index]
            let raw = Int(forward.subscriber.raw)
            guard raw < slots.count, let subscriber = slots[raw], let outbound = subscriber.srtp else {
                counters.forwardSkippedNoKeys &+= 1
                continue
            }
            do {
                // Written with the lane's next transport-wide number: kept when it leaves now
                // (the common case: nothing copied), renumbered at egress when it queues.
                let sequence = pacer.transportSequence(of: subscriber.id)
                let written = try batch.write(index, into: scratch, transportSequenceNumber: sequence)
                switch pacer.admit(subscriber.id, packetClass, packet: UnsafeRawBufferPointer(rebasing: scratch[0..<written]),
                                   frameSSRC: forward.ssrc, frameTimestamp: forward.timestamp,
                                   transportCCID: forward.extensions.transportCC, now: now) {
                case .sendNow:
                    router.recordSent(subscriber: subscriber.id, transportSequenceNumber: sequence, size: written, now: now)
                    // Nothing is copied for NACKs here: the router stored the original once per
                    // publisher stream and logged this send (docs/rtcp.md, NACK).
                    if try protectAndSend(scratch, length: written, with: outbound, to: subscriber) { counters.forwarded &+= 1 }
                case .queued:
                    queued = true
                case .dropped:
                    break  // counted by the pacer; a dropped frame's keyframe request follows
                }
            } catch {
                counters.forwardErrors &+= 1
            }
        }
        if queued { schedulePacing() }
        if pacer.hasKeyframeRequests { handlePacerKeyframeRequests() }
    }

    func countSRTP(_ error: SRTPError) {
        switch error {
        case .authFailure: counters.srtpAuthFailures &+= 1
        case .replay: counters.srtpReplays &+= 1
        default: counters.srtpMalformed &+= 1
        }
    }

    // MARK: RTCP

    func handleRTCPPacket(_ session: ICESessionID, _ bytes: UnsafeRawBufferPointer) {
        guard let participant = bySession[session] else { return }
        guard let srtp = participant.srtp else {
            counters.mediaBeforeKeys &+= 1
            return
        }
        counters.rtcpIn &+= 1
        participant.packetsIn &+= 1
        participant.bytesIn &+= UInt64(bytes.count)
        let buffer = UnsafeMutableRawBufferPointer(mutating: bytes)
        let length: Int
        do { length = try srtp.unprotectRTCP(buffer, length: bytes.count) } catch {
            countSRTP(error)
            return
        }
        let outgoing: [OutgoingRTCP]
        do {
            outgoing = try router.handleRTCP(from: participant.id, packet: UnsafeRawBufferPointer(rebasing: bytes[0..<length]),
                                             now: Self.monotonicMicroseconds(), ntp: Self.ntpNow())
        } catch {
            counters.rtcpMalformed &+= 1
            return
        }
        send(outgoing)
        sendRetransmissions()
    }

    /// Answers subscribers' NACKs from the publisher streams' retransmission stores, rewritten
    /// per subscriber (RTX when negotiated, else the original), each with the subscriber
    /// transport's next transport-wide sequence.
    func sendRetransmissions() {
        pendingRetransmissions.removeAll(keepingCapacity: true)
        router.takeRetransmissions(into: &pendingRetransmissions)
        let now = Self.monotonicMicroseconds()
        // Index loop: generic iteration allocates in debug builds (issue 3, NACK path).
        var index = 0
        while index < pendingRetransmissions.count {
            let pending = pendingRetransmissions[index]
            index += 1
            let raw = Int(pending.subscriber.raw)
            guard raw < slots.count, let subscriber = slots[raw], let outbound = subscriber.srtp else { continue }
            do {
                let sequence = pacer.transportSequence(of: subscriber.id)
                guard let written = try router.writeRetransmission(pending, now: now, transportSequenceNumber: sequence,
                                                                   into: scratch) else { continue }
                // Retransmissions queue ahead of new video when the lane's budget is spent.
                switch pacer.admit(subscriber.id, .retransmission, packet: UnsafeRawBufferPointer(rebasing: scratch[0..<written]),
                                   frameSSRC: pending.ssrc, frameTimestamp: 0, transportCCID: subscriber.transportCCID, now: now) {
                case .sendNow:
                    router.recordSent(subscriber: subscriber.id, transportSequenceNumber: sequence, size: written, now: now)
                    if try protectAndSend(scratch, length: written, with: outbound, to: subscriber) { counters.retransmitted &+= 1 }
                case .queued:
                    schedulePacing()
                case .dropped:
                    break
                }
            } catch {
                counters.forwardErrors &+= 1
            }
        }
    }

    /// RTCP budget per compound: 1,200 bytes (the DTLS/MTU budget) minus the SRTCP trailer.
    static let rtcpCompoundBudget = 1_200 - 32

    /// Serializes each participant's RTCP into compounds of at most `rtcpCompoundBudget`
    /// bytes, protects and queues them.
    func send(_ outgoing: [OutgoingRTCP]) {
        for item in outgoing {
            let raw = Int(item.participant.raw)
            guard raw < slots.count, let participant = slots[raw], let srtp = participant.srtp else { continue }
            var start = 0
            while start < item.packets.count {
                var end = start
                var size = 0
                while end < item.packets.count, end == start || size + item.packets[end].encodedLength <= Self.rtcpCompoundBudget {
                    size += item.packets[end].encodedLength
                    end += 1
                }
                guard size <= scratch.count - 64 else { start = end; continue }
                do {
                    let written = try RTCPCompound.write(Array(item.packets[start..<end]), into: scratch)
                    let protected = try srtp.protectRTCP(scratch, length: written)
                    if loop.send(UnsafeRawBufferPointer(rebasing: scratch[0..<protected]), to: participant.session) {
                        counters.rtcpOut &+= 1
                        participant.packetsOut &+= 1
                        participant.bytesOut &+= UInt64(protected)
                    }
                } catch {
                    counters.forwardErrors &+= 1
                }
                start = end
            }
        }
    }

    // MARK: ICE, timer

    func handleICE(_ event: ICEEvent, now: Int64) {
        switch event {
        case .consentExpired(let session):
            if let participant = bySession[session] { remove(participant, reason: .consentExpired, now: now) }
        case .pathChanged(_, let old, _):
            // The loop already sends to the newly nominated address; the first nomination
            // (old == nil) is no change.
            if old != nil { counters.pathChanges &+= 1 }
        case .checkValidated, .reject:
            break  // rejects are counted by the loop
        }
    }

    /// Every `timerIntervalMilliseconds` the housekeeping below; in between, while packets
    /// are queued or a probe runs, every pacing interval (5 ms) the pacer's releases and the
    /// probe padding (SFUServer+Pacing.swift).
    func timer(now: Int64) -> Int64? {
        let micros = Self.monotonicMicroseconds()
        releasePaced(now: micros)
        if now >= nextHousekeeping {
            housekeeping(now: now)
            updatePacingRates(now: Self.monotonicMicroseconds())
            nextHousekeeping = now + configuration.timerIntervalMilliseconds
        }
        sendProbePadding()
        return nextTimerDeadline(now: now, micros: micros)
    }

    func housekeeping(now: Int64) {
        if !handshaking.isEmpty {
            for participant in Array(handshaking.values) {
                guard let deadline = participant.dtls.nextTimeout, now >= deadline else { continue }
                process(participant.dtls.handleTimeout(now: now), of: participant, now: now)
            }
        }
        send(router.tick(now: Self.monotonicMicroseconds(), ntp: Self.ntpNow()))
        for change in router.takeSpeakerChanges() {
            let speaker = change.speaker.flatMap { id -> MemberID? in
                let raw = Int(id.raw)
                return raw < slots.count ? slots[raw]?.member : nil
            }
            onActiveSpeaker(change.room.raw, speaker)
        }
        flushRenegotiations(now: now)
    }

    // MARK: Removal, stats

    func remove(_ participant: MediaParticipant, reason: SFULeaveReason, now: Int64, notify: Bool = true) {
        guard members[participant.member] === participant else { return }
        if reason != .dtlsClosed && reason != .dtlsFailed && reason != .consentExpired {
            process(participant.dtls.close(now: now).filter { if case .send = $0 { return true } else { return false } },
                    of: participant, now: now)
        }
        let hadTracks = !participant.published.isEmpty
        if hadTracks { markRoomDirty(participant, now: now) }
        // Sections of the others that forwarded its tracks are freed now, so a reused
        // ParticipantID can never inherit them.
        for other in router.members(of: RoomID(participant.room)) where other != participant.id {
            guard let member = slots[Int(other.raw)] else { continue }
            for index in member.sections.indices {
                if case .forwarded(let value?) = member.sections[index].role, value.publisher == participant.id {
                    member.sections[index].role = .forwarded(nil)
                }
            }
        }
        try? router.leave(participant.id)
        loop.removeSession(participant.session, localUfrag: participant.localUfrag)
        members[participant.member] = nil
        bySession[participant.session] = nil
        handshaking[ObjectIdentifier(participant)] = nil
        dirty[ObjectIdentifier(participant)] = nil
        freeSlot(participant.id)
        if notify { onMemberLeft(participant.room, participant.member, reason) }
    }

    func snapshot() -> SFUServerStats {
        let memberStats = members.values.sorted { $0.id < $1.id }.map { participant -> SFUMemberStats in
            let lost = participant.published.keys.reduce(Int64(0)) { total, mid in
                total + (router.trackStats(participant.id, track: TrackID(mid))?.streams.reduce(0) { $0 + $1.cumulativeLost } ?? 0)
            }
            return SFUMemberStats(
                member: participant.member, room: participant.room, connected: participant.isConnected,
                packetsIn: participant.packetsIn, bytesIn: participant.bytesIn, packetsOut: participant.packetsOut,
                bytesOut: participant.bytesOut, packetsLost: lost, rttMicroseconds: router.participantStats(participant.id)?.rtt,
                srtpAuthFailures: participant.srtp?.authFailures ?? 0, srtpReplays: participant.srtp?.replays ?? 0,
                generation: participant.generation, offerOutstanding: participant.outstandingGeneration != nil,
                downlink: router.downlinkStats(participant.id, now: Self.monotonicMicroseconds()),
                pacing: pacer.laneStats(participant.id, now: Self.monotonicMicroseconds()))
        }
        let counts = router.counts
        return SFUServerStats(counters: counters, loop: loop.counters, members: memberStats, rooms: counts.rooms,
                              subscriptions: counts.subscriptions, pacer: pacer.stats)
    }

    static func monotonicMicroseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1_000
    }

    static func ntpNow() -> NTPTime {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return NTPTime(unixMicroseconds: Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_nsec) / 1_000)
    }
}
