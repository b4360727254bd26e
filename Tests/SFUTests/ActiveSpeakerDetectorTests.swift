import XCTest
@testable import SFU

/// Scripted RFC 6464 level traces: 20 ms packets per participant, evaluation every 100 ms.
final class ActiveSpeakerDetectorTests: XCTestCase {
    let a = ParticipantID(1), b = ParticipantID(2), c = ParticipantID(3)
    let ms: Int64 = 1000

    /// Speech-like: 220 ms voiced at `level`, then an 80 ms gap between words at −70 dBov.
    func talking(_ level: UInt8, _ t: Int64) -> UInt8 { (t / 1000) % 300 < 220 ? level : 70 }

    /// Runs the script from `from` to `to` (µs). `level(participant, t)` gives the level sent
    /// at t, or nil for no packet. Returns the changes announced.
    @discardableResult
    func run(_ d: inout ActiveSpeakerDetector, from: Int64, to: Int64, _ level: (ParticipantID, Int64) -> UInt8?) -> [ActiveSpeakerChange] {
        var changes: [ActiveSpeakerChange] = []
        var t = from
        while t < to {
            for p in [a, b, c] {
                if let l = level(p, t) { d.observe(p, ActiveSpeakerAudioLevel(level: l), now: t) }
            }
            if t % (100 * ms) == 0, let change = d.evaluate(now: t) { changes.append(change) }
            t += 20 * ms
        }
        return changes
    }

    func detector(_ config: ActiveSpeakerConfig = ActiveSpeakerConfig()) throws -> ActiveSpeakerDetector {
        try ActiveSpeakerDetector(room: RoomID("room-1"), config: config)
    }

    func testSingleSpeakerIsAnnouncedOnceWithItsLevel() throws {
        var d = try detector()
        let changes = run(&d, from: 0, to: 5_000 * ms) { p, t in p == self.a ? self.talking(30, t) : 127 }
        XCTAssertEqual(changes.map(\.speaker), [a])
        XCTAssertEqual(changes.first?.room, RoomID("room-1"))
        XCTAssertNil(changes.first?.previous)
        // Speech needs 150 ms to count (30 % of the window) and 300 ms of dominance.
        let at = try XCTUnwrap(changes.first?.at)
        XCTAssertGreaterThanOrEqual(at, 300 * ms)
        XCTAssertLessThanOrEqual(at, 700 * ms)
        let list = d.speakers(now: 5_000 * ms)
        XCTAssertEqual(list.map(\.participant), [a])
        XCTAssertEqual(list.first?.level, 30)
        // Window 4.5–5.0 s: voiced 4.50–4.72 and 4.80–5.00 s = 420 of 500 ms.
        XCTAssertEqual(list.first?.activity ?? 0, 0.84, accuracy: 0.001)
        XCTAssertEqual(d.dominant, a)
    }

    func testSwitchingSpeakers() throws {
        var d = try detector()
        // A talks 0–3 s, B 3–6 s, A again 6–9 s; the others send silence.
        let changes = run(&d, from: 0, to: 9_000 * ms) { p, t in
            let who = t < 3_000 * self.ms ? self.a : t < 6_000 * self.ms ? self.b : self.a
            return p == who ? self.talking(35, t) : 127
        }
        XCTAssertEqual(changes.map(\.speaker), [a, b, a])
        XCTAssertEqual(changes.map(\.previous), [nil, a, b])
        XCTAssertGreaterThan(changes[1].at, 3_000 * ms)
        XCTAssertLessThanOrEqual(changes[1].at, 3_800 * ms, "a clear turn is followed within 0.8 s")
        XCTAssertGreaterThan(changes[2].at, 6_000 * ms)
        XCTAssertLessThanOrEqual(changes[2].at, 6_800 * ms)
    }

    /// A talks for 10 s; B, louder, interjects for 250 ms every 1.5 s ("yes", "right") and
    /// once for 400 ms; C murmurs below the activation level.
    func crossTalk(_ p: ParticipantID, _ t: Int64) -> UInt8? {
        switch p {
        case a: return talking(30, t)
        case b:
            let phase = t % (1_500 * ms)
            let long = t >= 7_500 * ms && t < 9_000 * ms
            return phase >= 1_000 * ms && phase < (long ? 1_400 : 1_250) * ms ? 22 : 127
        default: return 60
        }
    }

    func testCrossTalkWithBriefInterjectionsDoesNotFlap() throws {
        var d = try detector()
        var changes = run(&d, from: 0, to: 1_220 * ms, crossTalk)
        // Mid-interjection both are listed, the established talker first; C is not.
        XCTAssertEqual(d.speakers(now: 1_200 * ms).map(\.participant), [a, b])
        changes += run(&d, from: 1_220 * ms, to: 10_000 * ms, crossTalk)
        XCTAssertEqual(changes.map(\.speaker), [a], "interjections never take the floor")

        // The same trace without hysteresis flaps: the test can tell.
        var bare = try detector(ActiveSpeakerConfig(minDominance: 0, minHold: 0, switchMargin: 0))
        XCTAssertGreaterThan(run(&bare, from: 0, to: 10_000 * ms, crossTalk).count, 2)
    }

    func testInterjectionWhileTheSpeakerBreathesDoesNotFlap() throws {
        var d = try detector()
        // A talks continuously but pauses 300 ms every 2 s; B, louder, says "mhm, sure" (250 ms)
        // in each pause.
        let trace: (ParticipantID, Int64) -> UInt8? = { p, t in
            let phase = t % (2_000 * self.ms)
            let pause = phase >= 1_500 * self.ms && phase < 1_800 * self.ms
            switch p {
            case self.a: return pause ? 127 : 30
            case self.b: return phase >= 1_520 * self.ms && phase < 1_770 * self.ms ? 22 : 127
            default: return 127
            }
        }
        XCTAssertEqual(run(&d, from: 0, to: 10_000 * ms, trace).map(\.speaker), [a])
        var bare = try detector(ActiveSpeakerConfig(minDominance: 0, minHold: 0, switchMargin: 0))
        XCTAssertGreaterThan(run(&bare, from: 0, to: 10_000 * ms, trace).count, 2, "without hysteresis the trace flaps")
    }

    func testListsBothTalkersLoudestFirst() throws {
        var d = try detector()
        run(&d, from: 0, to: 2_000 * ms) { p, _ in p == self.a ? 40 : p == self.b ? 25 : 127 }
        let list = d.speakers(now: 2_000 * ms - 20 * ms)
        XCTAssertEqual(list.map(\.participant), [b, a])
        XCTAssertEqual(list.map(\.level), [25, 40])
        XCTAssertGreaterThan(list[0].score, list[1].score)
    }

    func testSilenceAnnouncesNobody() throws {
        var d = try detector()
        // Everyone present: silence (127) and background noise just below activation (55).
        let changes = run(&d, from: 0, to: 5_000 * ms) { p, _ in p == self.c ? 55 : 127 }
        XCTAssertTrue(changes.isEmpty)
        XCTAssertTrue(d.speakers(now: 5_000 * ms).isEmpty)
        XCTAssertNil(d.dominant)
        XCTAssertEqual(d.participants, [a, b, c])
    }

    func testQuietDominantKeepsTheFloorButLeavesTheList() throws {
        var d = try detector()
        var changes = run(&d, from: 0, to: 2_000 * ms) { p, t in p == self.a ? self.talking(30, t) : 127 }
        changes += run(&d, from: 2_000 * ms, to: 6_000 * ms) { _, _ in 127 }
        XCTAssertEqual(changes.map(\.speaker), [a])
        XCTAssertEqual(d.dominant, a)
        XCTAssertTrue(d.speakers(now: 6_000 * ms).isEmpty)
    }

    func testStaleParticipantTimesOutAndReleasesTheFloor() throws {
        var d = try detector()
        // A talks until 2 s, then its packets stop (left without a signal); B stays silent.
        var changes = run(&d, from: 0, to: 2_000 * ms) { p, t in p == self.a ? self.talking(30, t) : 127 }
        changes += run(&d, from: 2_000 * ms, to: 5_000 * ms) { p, _ in p == self.a ? nil : 127 }
        XCTAssertEqual(changes.map(\.speaker), [a, nil])
        XCTAssertEqual(changes.last?.previous, a)
        let released = try XCTUnwrap(changes.last?.at)
        XCTAssertGreaterThanOrEqual(released, 2_000 * ms + d.config.staleAfter - 20 * ms)
        XCTAssertEqual(d.participants, [b, c])
        // Then B speaks and gets the floor.
        changes = run(&d, from: 5_000 * ms, to: 6_000 * ms) { p, t in p == self.b ? self.talking(30, t) : p == self.c ? 127 : nil }
        XCTAssertEqual(changes.map(\.speaker), [b])
        XCTAssertNil(changes.first?.previous)
    }

    func testRemovingTheDominantSpeakerReleasesTheFloor() throws {
        var d = try detector()
        run(&d, from: 0, to: 2_000 * ms) { p, t in p == self.a ? self.talking(30, t) : 127 }
        XCTAssertNil(d.remove(b, now: 2_000 * ms))
        XCTAssertEqual(d.remove(a, now: 2_000 * ms), ActiveSpeakerChange(room: RoomID("room-1"), speaker: nil, previous: a, at: 2_000 * ms))
        XCTAssertNil(d.dominant)
    }

    func testVoiceActivityFlagWhenEnabled() throws {
        var d = try detector(ActiveSpeakerConfig(useVoiceActivityFlag: true))
        for i in Int64(0)..<100 {
            d.observe(a, ActiveSpeakerAudioLevel(level: 20, voiceActivity: false), now: i * 20 * ms)
            d.observe(b, ActiveSpeakerAudioLevel(level: 40, voiceActivity: true), now: i * 20 * ms)
        }
        XCTAssertEqual(d.speakers(now: 2_000 * ms).map(\.participant), [b], "loud but V=0 is not speech")
    }

    func testReorderedSamplesAndFloodsAreBounded() throws {
        var d = try detector()
        d.observe(a, ActiveSpeakerAudioLevel(level: 30), now: 1_000 * ms)
        d.observe(a, ActiveSpeakerAudioLevel(level: 30), now: 500 * ms) // late packet: no crash, no time travel
        for i in Int64(0)..<10_000 { d.observe(a, ActiveSpeakerAudioLevel(level: 30), now: 1_000 * ms + i) }
        XCTAssertEqual(d.speakers(now: 1_010 * ms).count, 0, "10 ms of voice is not speech")
    }

    func testAudioLevelExtensionParsing() throws {
        XCTAssertEqual(try ActiveSpeakerAudioLevel(extensionData: [0x9E]), ActiveSpeakerAudioLevel(level: 30, voiceActivity: true))
        XCTAssertEqual(try ActiveSpeakerAudioLevel(extensionData: [0x7F, 0, 0]), ActiveSpeakerAudioLevel(level: 127, voiceActivity: false))
        XCTAssertThrowsError(try ActiveSpeakerAudioLevel(extensionData: [UInt8]())) { XCTAssertEqual($0 as? ActiveSpeakerError, .emptyAudioLevel) }
        XCTAssertEqual(ActiveSpeakerAudioLevel(level: 200).level, 127)
        XCTAssertEqual(ActiveSpeakerError.emptyAudioLevel.code, "speaker_empty_audio_level")
    }

    func testConfigValidation() {
        XCTAssertThrowsError(try ActiveSpeakerDetector(room: RoomID("r"), config: ActiveSpeakerConfig(window: 0))) { XCTAssertEqual($0 as? ActiveSpeakerError, .badConfig("window")) }
        XCTAssertThrowsError(try ActiveSpeakerDetector(room: RoomID("r"), config: ActiveSpeakerConfig(minActivity: 1.5))) { XCTAssertEqual($0 as? ActiveSpeakerError, .badConfig("minActivity")) }
        XCTAssertThrowsError(try ActiveSpeakerDetector(room: RoomID("r"), config: ActiveSpeakerConfig(staleAfter: 100_000))) { XCTAssertEqual($0 as? ActiveSpeakerError, .badConfig("staleAfter")) }
    }
}
