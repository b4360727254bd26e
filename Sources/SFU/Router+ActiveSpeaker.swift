import RTP

/// Active speaker per room (issue 4): every audio packet's RFC 6464 level feeds the room's
/// ``ActiveSpeakerDetector``; `tick` evaluates it and queues changes for the host to announce.
extension Router {
    /// 100 ms: the detector's hold times are 300 ms and more, so evaluating more often buys
    /// nothing; less often delays the announcement noticeably.
    static let speakerEvaluationInterval: Int64 = 100_000

    /// Dominant-speaker changes since the last call, oldest first.
    public func takeSpeakerChanges() -> [ActiveSpeakerChange] {
        let changes = speakerChanges
        speakerChanges.removeAll(keepingCapacity: true)
        return changes
    }

    /// The room's current dominant speaker, if any.
    public func dominantSpeaker(in room: RoomID) -> ParticipantID? {
        speakerDetectors[room]?.dominant
    }

    func observeAudioLevel(_ view: RTPPacketView, track: PublishedTrack, participant: ParticipantID, now: Int64) {
        let id = track.description.extensions.audioLevel
        guard id != 0, let value = view.extensionValue(id: id),
              let sample = try? ActiveSpeakerAudioLevel(extensionData: value),
              let room = participants[participant]?.room else { return }
        if speakerDetectors[room] == nil {
            // The default configuration is valid; a failure here would be a programming error
            // in the defaults, and then the room simply has no speaker detection.
            guard let detector = try? ActiveSpeakerDetector(room: room) else { return }
            speakerDetectors[room] = detector
        }
        speakerDetectors[room]?.observe(participant, sample, now: now)
    }

    func evaluateSpeakers(now: Int64) {
        guard now - lastSpeakerEvaluation >= Self.speakerEvaluationInterval else { return }
        lastSpeakerEvaluation = now
        for room in speakerDetectors.keys {
            if let change = speakerDetectors[room]?.evaluate(now: now) { speakerChanges.append(change) }
        }
    }

    func forgetSpeaker(_ participant: ParticipantID, room: RoomID) {
        guard speakerDetectors[room] != nil else { return }
        if let change = speakerDetectors[room]?.remove(participant, now: lastNow) { speakerChanges.append(change) }
        if rooms[room]?.isEmpty ?? true { speakerDetectors[room] = nil }
    }
}
