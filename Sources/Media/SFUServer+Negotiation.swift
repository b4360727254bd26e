import DTLS
import ICE
import SDP
import SFU

/// Offer/answer with members (protocol §9; JSEP, RFC 8829). Loop thread only.
extension SFUServer {
    /// RFC 8839 §5.4: ufrag 4–256 and password 22–256 ice-chars; 8 and 24 random alphanumerics
    /// (≈ 47 and 142 bits) from the system CSPRNG (`SystemRandomNumberGenerator` = getrandom).
    static let ufragLength = 8
    static let passwordLength = 24

    static func randomICEString(_ length: Int) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))] })
    }

    func handleOffer(room: String, member: MemberID, offer text: String, now: Int64) throws(SFUServerError) -> SFUAnswerResult {
        let offer: SessionDescription
        do { offer = try SessionDescription(parsing: text) } catch { throw .invalidSDP(reason: error.code) }
        guard let first = offer.media.first(where: { !$0.isRejected }),
              let remoteUfrag = offer.iceUfrag(for: first), let remotePassword = offer.icePwd(for: first)
        else { throw .invalidSDP(reason: "sdp_missing_ice_credentials") }
        if let existing = members[member] {
            guard existing.room == room else { throw .wrongRoom }
            return try renegotiate(existing, offer: offer, remoteUfrag: remoteUfrag, remotePassword: remotePassword, now: now)
        }
        let fingerprint = try Self.dtlsFingerprint(offer, section: first)
        let ufrag = Self.randomICEString(Self.ufragLength)
        let password = Self.randomICEString(Self.passwordLength)
        let answer = try makeAnswer(offer, ufrag: ufrag, password: password, sessionID: String(UInt32.random(in: 1...UInt32.max)),
                                    version: 1, forwarded: [:])
        let session: ICESessionID
        do {
            session = try loop.ice.register(localUfrag: ufrag, localPassword: password, remoteUfrag: remoteUfrag,
                                            remotePassword: remotePassword, now: now)
        } catch { throw .iceRejected(reason: error.code) }
        // In a worker pool the ufrag must be unique across workers (the directory routes
        // STUN by it); a clash of 47-bit random ufrags is refused like a local duplicate.
        guard loop.claimUfrag(ufrag) else {
            loop.ice.remove(session)
            throw .iceRejected(reason: ICEError.duplicateLocalUfrag.code)
        }
        let endpoint: DTLSEndpoint
        do {
            endpoint = try DTLSEndpoint(role: .server, context: dtlsContext, expectedRemoteFingerprint: fingerprint)
        } catch {
            loop.removeSession(session, localUfrag: ufrag)
            throw .badFingerprint
        }
        _ = endpoint.start(now: now)
        let id = allocateSlot()
        let (codecMap, extensionIDs) = receiveNumbering(answer)
        let participant = MediaParticipant(
            id: id, member: member, room: room, session: session, localUfrag: ufrag, localPassword: password,
            remoteUfrag: remoteUfrag, dtls: endpoint, sdpSessionID: answer.description.origin.sessionID,
            codecMap: codecMap, extensionIDs: extensionIDs)
        participant.sections = answer.sections.map { section in
            var value = MediaParticipant.Section(mid: section.mid, kind: section.kind ?? .application, role: .own)
            value.receivedRIDs = section.receivedRIDs
            value.rejected = !section.isAccepted
            return value
        }
        let description = ParticipantDescription(
            cname: member.streamID, receiveCodecs: codecMap.entries.map(Self.codecDescription),
            receiveExtensions: Self.extensionIDs(extensionIDs))
        do {
            try router.join(id, room: RoomID(room), description: description, now: now * 1000)
        } catch {
            loop.removeSession(session, localUfrag: ufrag)
            freeSlot(id)
            throw .routerRejected(reason: error.code)
        }
        members[member] = participant
        bySession[session] = participant
        slots[Int(id.raw)] = participant
        handshaking[ObjectIdentifier(participant)] = participant
        let published: Bool
        do { published = try publishTracks(of: participant, from: answer.sections, now: now) } catch {
            remove(participant, reason: .left, now: now, notify: false)
            throw error
        }
        if published { markRoomDirty(participant, now: now) }
        if !router.subscriptions(of: id).isEmpty { markDirty(participant, now: now) }
        return SFUAnswerResult(generation: participant.generation, sdp: answer.sdp)
    }

    /// A later offer from a joined member: renegotiation, ICE restart (new ufrag), tracks
    /// added/removed. Refused with `glare` while our offer is outstanding (§9: server impolite).
    func renegotiate(_ participant: MediaParticipant, offer: SessionDescription, remoteUfrag: String, remotePassword: String,
                     now: Int64) throws(SFUServerError) -> SFUAnswerResult {
        guard participant.outstandingGeneration == nil else { throw .glare }
        // JSEP (RFC 8829 §5.2.2): existing m-lines keep their place and mid.
        guard offer.media.count >= participant.sections.count else { throw .invalidSDP(reason: "sdp_mline_removed") }
        for (index, section) in participant.sections.enumerated() where offer.media[index].mid != section.mid {
            throw .invalidSDP(reason: "sdp_mid_changed")
        }
        var ufrag = participant.localUfrag
        var password = participant.localPassword
        let restart = remoteUfrag != participant.remoteUfrag
        if restart {
            ufrag = Self.randomICEString(Self.ufragLength)
            password = Self.randomICEString(Self.passwordLength)
        }
        var forwarded: [String: ForwardedTrack] = [:]
        let subscriptions = router.subscriptions(of: participant.id)
        for section in participant.sections {
            guard case .forwarded(let value?) = section.role,
                  let info = subscriptions.first(where: { $0.publisher == value.publisher && $0.track == value.track })
            else { continue }
            forwarded[section.mid] = forwardedTrack(info)
        }
        participant.sdpVersion += 1
        let answer = try makeAnswer(offer, ufrag: ufrag, password: password, sessionID: participant.sdpSessionID,
                                    version: participant.sdpVersion, forwarded: forwarded)
        if restart {
            guard loop.claimUfrag(ufrag) else { throw .iceRejected(reason: ICEError.duplicateLocalUfrag.code) }
            do {
                try loop.ice.restart(participant.session, localUfrag: ufrag, localPassword: password, remoteUfrag: remoteUfrag,
                                     remotePassword: remotePassword, now: now)
            } catch {
                loop.releaseUfrag(ufrag)
                throw .iceRejected(reason: error.code)
            }
            loop.releaseUfrag(participant.localUfrag)
            participant.localUfrag = ufrag
            participant.localPassword = password
            participant.remoteUfrag = remoteUfrag
        }
        for (index, negotiated) in answer.sections.enumerated() {
            if index < participant.sections.count {
                participant.sections[index].rejected = !negotiated.isAccepted
                if case .own = participant.sections[index].role { participant.sections[index].receivedRIDs = negotiated.receivedRIDs }
            } else {
                var value = MediaParticipant.Section(mid: negotiated.mid, kind: negotiated.kind ?? .application, role: .own)
                value.receivedRIDs = negotiated.receivedRIDs
                value.rejected = !negotiated.isAccepted
                participant.sections.append(value)
            }
        }
        let ownMids = Set(participant.sections.compactMap { section -> String? in
            if case .own = section.role { return section.mid }
            return nil
        })
        if try publishTracks(of: participant, from: answer.sections.filter { ownMids.contains($0.mid) }, now: now) {
            markRoomDirty(participant, now: now)
        }
        return SFUAnswerResult(generation: participant.generation, sdp: answer.sdp)
    }

    /// The member's answer to our offer `generation`.
    func handleAnswer(member: MemberID, generation: UInt64, sdp: String, now: Int64) throws(SFUServerError) {
        guard let participant = members[member] else { throw .unknownMember }
        guard let outstanding = participant.outstandingGeneration, outstanding == generation else { throw .invalidGeneration }
        let answer: SessionDescription
        do { answer = try SessionDescription(parsing: sdp) } catch { throw .invalidSDP(reason: error.code) }
        guard answer.media.count == participant.sections.count else { throw .invalidSDP(reason: "sdp_mline_count") }
        for (index, section) in answer.media.enumerated() {
            guard section.mid == participant.sections[index].mid else { throw .invalidSDP(reason: "sdp_mid_changed") }
        }
        var rejectedSSRCs: Set<UInt32> = []
        let subscriptions = router.subscriptions(of: participant.id)
        for (index, section) in answer.media.enumerated() where section.isRejected {
            participant.sections[index].rejected = true
            if case .forwarded(let value?) = participant.sections[index].role,
               let info = subscriptions.first(where: { $0.publisher == value.publisher && $0.track == value.track }) {
                rejectedSSRCs.insert(info.ssrc)
            }
        }
        participant.outstandingGeneration = nil
        // The member's browser applied our offer before answering: its m-lines and SSRCs now
        // demux there, so forwarding to them can start (see RouterConfig.holdUntilNegotiated).
        router.markNegotiated(subscriber: participant.id, ssrcs: participant.offeredSSRCs.filter { !rejectedSSRCs.contains($0) })
        participant.offeredSSRCs = []
    }

    // MARK: - Helpers

    func makeAnswer(_ offer: SessionDescription, ufrag: String, password: String, sessionID: String, version: UInt64,
                    forwarded: [String: ForwardedTrack]) throws(SFUServerError) -> SFUAnswer {
        var builder = SFUAnswerBuilder(transport: transportParameters(ufrag: ufrag, password: password), codecs: answerCodecs,
                                       sessionID: sessionID, sessionVersion: version)
        for (mid, track) in forwarded {
            builder.directions[mid] = .sendonly
            builder.sendingTracks[mid] = track
        }
        do { return try builder.answer(to: offer) } catch { throw .invalidSDP(reason: error.code) }
    }

    func transportParameters(ufrag: String, password: String) -> SFUTransportParameters {
        let address = loop.announcedAddress
        return SFUTransportParameters(
            iceUfrag: ufrag, icePwd: password,
            fingerprint: Fingerprint(hashFunction: "sha-256", bytes: certificate.sha256Fingerprint.bytes),
            candidates: address.map { [.host(address: $0.host, port: $0.port)] } ?? [])
    }

    static func dtlsFingerprint(_ offer: SessionDescription, section: MediaDescription) throws(SFUServerError) -> DTLSFingerprint {
        let fingerprints: [Fingerprint]
        do { fingerprints = try offer.fingerprints(for: section) } catch { throw .invalidSDP(reason: error.code) }
        // RFC 8122 §5: several may be given; prefer SHA-256 (what every browser sends).
        let ordered = fingerprints.sorted { ($0.hashFunction == "sha-256" ? 0 : 1) < ($1.hashFunction == "sha-256" ? 0 : 1) }
        for candidate in ordered {
            guard let algorithm = DTLSFingerprint.Algorithm(rawValue: candidate.hashFunction),
                  candidate.bytes.count == algorithm.digestLength else { continue }
            return DTLSFingerprint(algorithm: algorithm, bytes: candidate.bytes)
        }
        throw .badFingerprint
    }

    /// The member's payload types and extension ids, completed with the server's defaults
    /// for codecs/extensions it did not offer (numbers it does not use), so a server offer
    /// can add video to an audio-only member.
    func receiveNumbering(_ answer: SFUAnswer) -> (CodecMap, [HeaderExtension.KnownURI: UInt8]) {
        var map = answer.codecMap
        var used = Set(map.entries.flatMap { [$0.payloadType] + ($0.rtxPayloadType.map { [$0] } ?? []) })
        var free = (96...127).map(UInt8.init).filter { !used.contains($0) }.makeIterator()
        for entry in SFUOfferBuilder.defaultCodecMap.entries where answerCodecs.contains(entry.codec) && map.payloadType(for: entry.codec) == nil {
            var chosen = entry
            if used.contains(entry.payloadType) { guard let next = free.next() else { continue }; chosen.payloadType = next }
            used.insert(chosen.payloadType)
            if let rtx = entry.rtxPayloadType, used.contains(rtx) { chosen.rtxPayloadType = free.next() }
            if let rtx = chosen.rtxPayloadType { used.insert(rtx) }
            map.add(chosen)
        }
        var ids: [HeaderExtension.KnownURI: UInt8] = [:]
        for section in answer.sections where section.isAccepted {
            for (uri, id) in section.headerExtensions where ids[uri] == nil { ids[uri] = id }
        }
        var usedIDs = Set(ids.values)
        for (uri, id) in SFUOfferBuilder.defaultHeaderExtensionIDs.sorted(by: { $0.value < $1.value }) where ids[uri] == nil {
            let chosen = usedIDs.contains(id) ? (1...14).map(UInt8.init).first { !usedIDs.contains($0) } : id
            guard let chosen else { continue }
            ids[uri] = chosen
            usedIDs.insert(chosen)
        }
        return (map, ids)
    }

    static func codecDescription(_ entry: CodecMap.Entry) -> CodecDescription {
        CodecDescription(name: entry.codec.encodingName, payloadType: entry.payloadType, clockRate: entry.codec.clockRate,
                         channels: entry.codec.channels ?? 1,
                         parameters: entry.codec == .h264 ? "packetization-mode=1;profile-level-id=42e01f" : "",
                         rtxPayloadType: entry.rtxPayloadType)
    }

    static func extensionIDs(_ ids: [HeaderExtension.KnownURI: UInt8]) -> HeaderExtensionIDs {
        HeaderExtensionIDs(mid: ids[.mid] ?? 0, rid: ids[.rid] ?? 0, repairedRid: ids[.repairedRID] ?? 0,
                           audioLevel: ids[.audioLevel] ?? 0, absSendTime: ids[.absSendTime] ?? 0,
                           transportCC: ids[.transportWideCC] ?? 0)
    }

    /// The router's track for a negotiated receiving section, or nil when we do not receive it.
    /// TrackID = the member's mid (stable for the m-line's life, RFC 8829 §5.2.2).
    static func trackDescription(_ section: NegotiatedSection) -> TrackDescription? {
        guard section.isAccepted, section.direction.receives, let kind = section.kind, kind != .application else { return nil }
        let layers: [StreamDescription]
        let fid = section.remoteSSRCGroups.filter { $0.semantics == "FID" && $0.ssrcs.count == 2 }
        func rtx(of ssrc: UInt32) -> UInt32? { fid.first { $0.ssrcs[0] == ssrc }?.ssrcs[1] }
        if !section.receivedRIDs.isEmpty {
            // RFC 8853 rid simulcast: SSRCs unsignaled (Chromium), learned from the rid
            // extension; layers in offer order, taken as lowest first.
            layers = section.receivedRIDs.prefix(3).map { StreamDescription(ssrc: nil, rid: $0) }
        } else if let sim = section.remoteSSRCGroups.first(where: { $0.semantics == "SIM" && (2...3).contains($0.ssrcs.count) }) {
            layers = sim.ssrcs.map { StreamDescription(ssrc: $0, rtxSSRC: rtx(of: $0)) }
        } else if let primary = fid.first?.ssrcs[0] ?? section.remoteSSRCs.first {
            layers = [StreamDescription(ssrc: primary, rtxSSRC: rtx(of: primary))]
        } else {
            layers = [StreamDescription(ssrc: nil)]  // learned from the mid extension
        }
        return TrackDescription(
            id: TrackID(section.mid), kind: kind == .audio ? .audio : .video, codecs: section.codecs.map(codecDescription),
            layers: layers, extensions: extensionIDs(section.headerExtensions), mid: section.mid,
            // Our answer lists goog-remb for video codecs that offered it (SFUCodec.feedback);
            // a REMB the publisher did not negotiate is ignored by it (RFC 4585 §4.2).
            acceptsREMB: kind == .video)
    }

    /// Publishes, re-publishes or unpublishes the member's own sections; true when its set of
    /// published tracks changed (the others need a new offer).
    func publishTracks(of participant: MediaParticipant, from sections: [NegotiatedSection], now: Int64) throws(SFUServerError) -> Bool {
        var changed = false
        for section in sections {
            let wanted = Self.trackDescription(section)
            let previous = participant.published[section.mid]
            if wanted == previous { continue }
            do {
                if let wanted {
                    try router.publish(participant.id, track: wanted, now: now * 1000)
                    participant.published[section.mid] = wanted
                    if previous == nil { changed = true }
                } else {
                    try router.unpublish(participant.id, track: TrackID(section.mid))
                    participant.published[section.mid] = nil
                    changed = true
                }
            } catch { throw .routerRejected(reason: error.code) }
        }
        return changed
    }

    func markRoomDirty(_ participant: MediaParticipant, now: Int64) {
        for other in router.members(of: RoomID(participant.room)) where other != participant.id {
            if let member = slots[Int(other.raw)] { markDirty(member, now: now) }
        }
    }

    func markDirty(_ participant: MediaParticipant, now: Int64) {
        participant.markDirty(now: now)
        dirty[ObjectIdentifier(participant)] = participant
    }

    func forwardedTrack(_ info: SubscriptionInfo) -> ForwardedTrack {
        let publisher = slots[Int(info.publisher.raw)]?.member.streamID ?? info.cname
        return ForwardedTrack(streamID: publisher, trackID: "\(info.publisher.raw)-\(info.track.raw)", ssrc: info.ssrc,
                              rtxSSRC: info.kind == .video ? info.rtxSSRC : nil, cname: info.cname)
    }

    func allocateSlot() -> ParticipantID {
        if let raw = freeSlots.popLast() { return ParticipantID(raw) }
        slots.append(nil)
        return ParticipantID(UInt32(slots.count - 1))
    }

    func freeSlot(_ id: ParticipantID) {
        pacer.removeLane(id)
        slots[Int(id.raw)] = nil
        freeSlots.append(id.raw)
    }
}
