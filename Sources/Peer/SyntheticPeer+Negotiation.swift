import DTLS
import SDP

/// Description handling of `SyntheticPeer` (loop thread).
extension SyntheticPeer {
    /// The m-lines of our next offer: the current session's in order, then new tracks.
    func offerSections() -> [PeerSDP.OfferSection] {
        var sections: [PeerSDP.OfferSection] = []
        var placed = Set<String>()
        if let remote {
            for (index, section) in remote.sections.enumerated() {
                placed.insert(section.mid)
                if let track = tracks.first(where: { $0.mid == section.mid }) {
                    sections.append(.send(track))
                } else if !section.rejected, let (payloadType, codec) = section.payloadTypes.min(by: { $0.key < $1.key }) {
                    let extensions = (try? remote.sdp.headerExtensions(for: remote.sdp.media[index])) ?? []
                    sections.append(.receive(mid: section.mid, codec: codec, payloadType: payloadType,
                                             midExtensionID: extensions.first { $0.knownURI == .mid }?.id))
                } else {
                    sections.append(.rejected(mid: section.mid, media: remote.sdp.media[index].media))
                }
            }
        }
        for track in tracks where !placed.contains(track.mid) { sections.append(.send(track)) }
        return sections
    }

    func localTransport(setup: DTLSSetup) throws(PeerError) -> PeerTransport {
        let credentials = try nice.localCredentials()
        let candidates = nice.localCandidates()
        guard !candidates.isEmpty else { throw .ice("no local candidates gathered") }
        return PeerTransport(iceUfrag: credentials.ufrag, icePwd: credentials.pwd,
                             fingerprint: certificate.sha256Fingerprint.sdpValue, candidates: candidates)
    }

    /// Takes a remote description: the first one starts ICE and creates the DTLS endpoint;
    /// every one refreshes payload types, SSRC labels and what we may send.
    func apply(remote: RemoteDescription, role: DTLSEndpoint.Role) throws(PeerError) {
        if let previous = self.remote {
            guard previous.iceUfrag == remote.iceUfrag, previous.fingerprint == remote.fingerprint else {
                throw .invalidRemoteDescription("ICE restart / new certificate is not supported")
            }
        } else {
            do {
                dtls = try DTLSEndpoint(role: role, certificate: certificate, expectedRemoteFingerprint: remote.fingerprint,
                                        configuration: DTLSEndpoint.Configuration(srtpProfiles: configuration.srtpProfiles))
            } catch { throw .crypto("DTLS endpoint: \(error)") }
            dtlsRole = role
            try nice.setRemote(ufrag: remote.iceUfrag, pwd: remote.icePwd, candidates: relayedCandidates(remote.candidates))
            state = .checking
        }
        self.remote = remote
        for section in remote.sections {
            for (payloadType, codec) in section.payloadTypes { payloadCodecs[payloadType] = codec }
            for ssrc in section.ssrcs { ssrcLabels[ssrc] = (section.mid, section.streamID) }
        }
        for track in tracks {
            guard let index = remote.sections.firstIndex(where: { $0.mid == track.mid }) else {
                sendParameters[track.mid] = (track.codec.defaultPayloadType, nil, false)
                continue
            }
            let section = remote.sections[index]
            let payloadType = section.payloadTypes.first { $0.value == track.codec }?.key ?? track.codec.defaultPayloadType
            // Their direction as written: recvonly/sendrecv (answer or offer) means they take
            // our media on this mid.
            let allowed = !section.rejected && section.direction.receives
            let extensions = (try? remote.sdp.headerExtensions(for: remote.sdp.media[index])) ?? []
            let midID = extensions.first { $0.knownURI == .mid }?.id
            sendParameters[track.mid] = (payloadType, midID, allowed)
            audioLevelExtensionIDs[track.mid] = track.codec == .opus ? extensions.first { $0.knownURI == .audioLevel }?.id : nil
        }
        updateRetransmission(remote: remote)
        publish()
    }
}
