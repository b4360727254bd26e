import SDP
import SFU

/// Server-initiated renegotiation (protocol §9): one sendonly m-line per forwarded track,
/// mids kept in order, at most one offer outstanding per member, changes coalesced.
extension SFUServer {
    /// Emits offers for dirty members whose last change is `renegotiationDebounce` old and
    /// who have no offer outstanding.
    func flushRenegotiations(now: Int64) {
        guard !dirty.isEmpty else { return }
        for (key, participant) in dirty {
            guard participant.outstandingGeneration == nil,
                  now - participant.lastChange >= configuration.renegotiationDebounceMilliseconds else { continue }
            dirty[key] = nil
            participant.dirtySince = nil
            sendOffer(to: participant)
        }
    }

    /// Builds and emits the server offer for `participant`'s current subscriptions.
    func sendOffer(to participant: MediaParticipant) {
        let subscriptions = router.subscriptions(of: participant.id)
        var wanted: [String: SubscriptionInfo] = [:]
        for info in subscriptions { wanted["\(info.publisher.raw)/\(info.track.raw)"] = info }
        // Free sections whose track is gone.
        for index in participant.sections.indices {
            guard case .forwarded(let value?) = participant.sections[index].role else { continue }
            if wanted.removeValue(forKey: "\(value.publisher.raw)/\(value.track.raw)") == nil {
                participant.sections[index].role = .forwarded(nil)
            }
        }
        // New tracks: reuse a free section of the same kind (RFC 8829 §5.2.2), else append.
        for info in subscriptions where wanted["\(info.publisher.raw)/\(info.track.raw)"] != nil {
            let kind: SDP.MediaKind = info.kind == .audio ? .audio : .video
            let role = MediaParticipant.Section.Role.forwarded(.init(publisher: info.publisher, track: info.track))
            if let free = participant.sections.firstIndex(where: { section in
                if case .forwarded(nil) = section.role { return section.kind == kind && !section.rejected }
                return false
            }) {
                participant.sections[free].role = role
            } else {
                participant.nextMid += 1
                participant.sections.append(MediaParticipant.Section(mid: "sfu\(participant.nextMid)", kind: kind, role: role))
            }
        }
        var specs: [SFUOfferBuilder.Section] = []
        var offered: [UInt32] = []
        let byKey = Dictionary(subscriptions.map { ("\($0.publisher.raw)/\($0.track.raw)", $0) }, uniquingKeysWith: { a, _ in a })
        for section in participant.sections {
            switch section.role {
            case .own:
                specs.append(.init(mid: section.mid, kind: section.kind, track: nil, stopped: section.rejected))
            case .forwarded(let value):
                let info = value.flatMap { byKey["\($0.publisher.raw)/\($0.track.raw)"] }
                if let info {
                    try? router.setMid(section.mid, subscriber: participant.id, publisher: info.publisher, track: info.track)
                    if !section.rejected { offered.append(info.ssrc) }
                }
                specs.append(.init(mid: section.mid, kind: section.kind, track: info.map(forwardedTrack), stopped: section.rejected))
            }
        }
        participant.sdpVersion += 1
        let builder = SFUOfferBuilder(
            transport: transportParameters(ufrag: participant.localUfrag, password: participant.localPassword),
            sessionID: participant.sdpSessionID, sessionVersion: participant.sdpVersion,
            codecMap: participant.codecMap, headerExtensionIDs: participant.extensionIDs)
        var description = builder.offer(sections: specs)
        // The member's own send sections are recvonly from our side (with its simulcast rids).
        for (index, section) in participant.sections.enumerated() {
            guard case .own = section.role, !section.rejected, index < description.media.count else { continue }
            var media = description.media[index]
            media.attributes = media.attributes.map { $0.name == "inactive" ? SDPAttribute("recvonly") : $0 }
            if !section.receivedRIDs.isEmpty {
                for rid in section.receivedRIDs { media.addAttribute("rid", "\(rid) recv") }
                media.addAttribute("simulcast", "recv " + section.receivedRIDs.joined(separator: ";"))
            }
            description.media[index] = media
        }
        participant.generation += 1
        participant.outstandingGeneration = participant.generation
        participant.offeredSSRCs = offered
        counters.offersSent &+= 1
        onOffer(participant.member, participant.generation, description.serialized)
    }
}
