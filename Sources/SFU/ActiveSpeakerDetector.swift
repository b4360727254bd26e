/// Picks a room's dominant speaker from RFC 6464 audio levels, without flapping.
///
/// Pure: the caller passes `now` (monotonic µs). Feed every audio packet's level with
/// `observe`, call `evaluate(now:)` on a timer (every 50–200 ms; dominance times are measured
/// at these calls) and announce the change it returns, if any.
///
/// Per participant, over a sliding `window`, each sample stands for the time until the next
/// one (at most `sampleHold`); the voiced time (louder than `activationLevel`) gives the
/// activity ratio, and loudness × voiced time / window gives the score (a time-weighted,
/// silence-aware average: a talker with pauses scores lower than a continuous one, a cough
/// scores little). A participant speaks when its activity ≥ `minActivity`.
///
/// Floor control: a challenger takes the floor when it is speaking and out-scores the current
/// dominant speaker by `switchMargin` (or the current one is not speaking) continuously for
/// `minDominance`, and the current one has held the floor for `minHold` or is not speaking.
/// A dominant speaker who merely goes quiet keeps the floor (like Jitsi's dominant speaker);
/// one who leaves (`remove`) or goes stale (`staleAfter` without samples) releases it.
public struct ActiveSpeakerDetector: Sendable {
    public let room: RoomID
    public let config: ActiveSpeakerConfig
    /// The announced dominant speaker.
    public private(set) var dominant: ParticipantID?
    private var dominantSince: Int64 = 0
    private var challenger: (id: ParticipantID, since: Int64)?
    private var histories: [ParticipantID: History] = [:]

    /// 256 samples per participant: 500 ms of 2.5 ms Opus frames (the shortest) fit; a sender
    /// flooding levels can not grow memory.
    static let maxSamples = 256

    /// Samples of one participant: time and voiced loudness (127 − level, or 0 when not voiced).
    struct History: Sendable {
        var times: [Int64] = []
        var loudness: [UInt8] = []
        var lastAt: Int64 = .min
    }

    public init(room: RoomID, config: ActiveSpeakerConfig = ActiveSpeakerConfig()) throws(ActiveSpeakerError) {
        try config.validate()
        self.room = room
        self.config = config
    }

    /// Participants with recent samples, in id order.
    public var participants: [ParticipantID] { histories.keys.sorted() }

    /// Records one audio level of `participant` received at `now`. A time earlier than the
    /// participant's previous sample is taken as that time (reordered packets).
    public mutating func observe(_ participant: ParticipantID, _ sample: ActiveSpeakerAudioLevel, now: Int64) {
        var h = histories[participant] ?? History()
        let at = max(now, h.lastAt)
        let voiced = sample.level <= config.activationLevel && (sample.voiceActivity || !config.useVoiceActivityFlag)
        h.times.append(at)
        h.loudness.append(voiced ? 127 - sample.level : 0)
        h.lastAt = at
        // Drop samples that can no longer reach into the window.
        let horizon = at - config.window - config.sampleHold
        var drop = 0
        while drop < h.times.count - 1, h.times[drop] < horizon { drop += 1 }
        drop = max(drop, h.times.count - Self.maxSamples)
        if drop > 0 {
            h.times.removeFirst(drop)
            h.loudness.removeFirst(drop)
        }
        histories[participant] = h
    }

    /// Forgets a participant (left the room). Returns the release of the floor if it held it.
    public mutating func remove(_ participant: ParticipantID, now: Int64) -> ActiveSpeakerChange? {
        histories[participant] = nil
        if challenger?.id == participant { challenger = nil }
        guard dominant == participant else { return nil }
        dominant = nil
        return ActiveSpeakerChange(room: room, speaker: nil, previous: participant, at: now)
    }

    /// Participants speaking now, loudest score first (ties by id).
    public func speakers(now: Int64) -> [ActiveSpeakerLevel] {
        histories.compactMap { id, h in
            let l = level(id, h, now: now)
            return l.activity >= config.minActivity ? l : nil
        }.sorted { $0.score != $1.score ? $0.score > $1.score : $0.participant < $1.participant }
    }

    /// Times out stale participants and applies floor control. Returns a change only when the
    /// dominant speaker changes.
    public mutating func evaluate(now: Int64) -> ActiveSpeakerChange? {
        for (id, h) in histories where now - h.lastAt >= config.staleAfter {
            if let release = remove(id, now: now) { return release }
        }
        let speaking = speakers(now: now)
        let current = dominant.flatMap { d in speaking.first { $0.participant == d } }
        guard let best = speaking.first(where: { $0.participant != dominant }),
              current.map({ best.score > $0.score + config.switchMargin }) ?? true
        else {
            challenger = nil
            return nil
        }
        if challenger?.id != best.participant { challenger = (best.participant, now) }
        let dominated = now - (challenger?.since ?? now) >= config.minDominance
        let floorFree = dominant == nil || current == nil || now - dominantSince >= config.minHold
        guard dominated, floorFree else { return nil }
        let previous = dominant
        dominant = best.participant
        dominantSince = now
        challenger = nil
        return ActiveSpeakerChange(room: room, speaker: best.participant, previous: previous, at: now)
    }

    /// Windowed, time-weighted level of one participant.
    private func level(_ id: ParticipantID, _ h: History, now: Int64) -> ActiveSpeakerLevel {
        let windowStart = now - config.window
        var voicedTime: Int64 = 0
        var weighted: Double = 0
        for i in h.times.indices where h.loudness[i] > 0 {
            let next = i + 1 < h.times.count ? h.times[i + 1] : now
            let end = min(next, h.times[i] + config.sampleHold, now)
            let start = max(h.times[i], windowStart)
            guard end > start else { continue }
            voicedTime += end - start
            weighted += Double(h.loudness[i]) * Double(end - start)
        }
        let activity = Double(voicedTime) / Double(config.window)
        let meanLoudness = voicedTime > 0 ? weighted / Double(voicedTime) : 0
        return ActiveSpeakerLevel(participant: id, level: UInt8(127 - min(max(meanLoudness, 0), 127).rounded()),
                                  activity: activity, score: weighted / Double(config.window))
    }
}
