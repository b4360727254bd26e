import Peer
import XCTest

final class ToneAndOpusTests: XCTestCase {
    /// 1 s of a 440 Hz tone through libopus and back: the decoded tone is still 440 Hz.
    func testOpusRoundTripKeepsToneFrequency() throws {
        for frequency in [330.0, 440.0, 523.0, 1000.0] {
            var generator = try ToneGenerator(frequency: frequency)
            let encoder = try OpusAudioEncoder()
            let decoder = try OpusAudioDecoder()
            var decoded: [Int16] = []
            var bytes = 0
            for _ in 0..<50 {
                let packet = try encoder.encode(generator.nextFrame(samplesPerChannel: encoder.samplesPerFrame))
                bytes += packet.count
                let pcm = try decoder.decode(packet)
                XCTAssertEqual(pcm.count, 960 * 2)
                decoded += pcm
            }
            // Skip the codec's first 100 ms (look-ahead and start-up).
            let mono = ToneAnalysis.mono(Array(decoded.dropFirst(4800 * 2)), channels: 2)
            let analysis = ToneAnalysis(samples: mono, sampleRate: 48_000)
            XCTAssertTrue(analysis.matches(frequency: frequency, tolerance: 0.01), "\(frequency) Hz → \(analysis)")
            XCTAssertGreaterThan(analysis.purity, 0.8, "\(analysis)")
            print("opus \(frequency) Hz: \(bytes) B/s, decoded \(analysis.dominantFrequency) Hz, rms \(Int(analysis.rms)), purity \(analysis.purity)")
        }
    }

    func testAnalysisTellsTonesApartAndRejectsSilence() throws {
        var generator = try ToneGenerator(frequency: 600, channels: 1)
        let tone = ToneAnalysis(samples: generator.nextFrame(samplesPerChannel: 48_000), sampleRate: 48_000)
        XCTAssertEqual(tone.dominantFrequency, 600, accuracy: 1)
        XCTAssertEqual(tone.rms, ToneGenerator.defaultAmplitude / 2.squareRoot(), accuracy: 5)
        XCTAssertGreaterThan(tone.purity, 0.95)
        XCTAssertFalse(tone.matches(frequency: 650))
        XCTAssertFalse(tone.matches(frequency: 550))

        let silence = ToneAnalysis(samples: [Int16](repeating: 0, count: 4800), sampleRate: 48_000)
        XCTAssertEqual(silence.rms, 0)
        XCTAssertFalse(silence.matches(frequency: 600))

        // White noise: loud but no dominant tone.
        var seed: UInt64 = 7
        let noise: [Int16] = (0..<48_000).map { _ in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int16(truncatingIfNeeded: seed >> 48) / 4
        }
        let analysis = ToneAnalysis(samples: noise, sampleRate: 48_000)
        XCTAssertGreaterThan(analysis.rms, 1000)
        XCTAssertLessThan(analysis.purity, 0.05)

        XCTAssertEqual(ToneAnalysis(samples: [], sampleRate: 48_000).rms, 0)
    }

    func testBadParametersAreTypedErrors() throws {
        XCTAssertThrowsError(try ToneGenerator(frequency: 0)) { XCTAssertEqual(($0 as? PeerError)?.code, "invalidParameter") }
        XCTAssertThrowsError(try ToneGenerator(frequency: 30_000))
        XCTAssertThrowsError(try ToneGenerator(frequency: 440, channels: 3))
        let encoder = try OpusAudioEncoder()
        XCTAssertThrowsError(try encoder.encode([0, 1, 2])) { XCTAssertEqual(($0 as? PeerError)?.code, "invalidParameter") }
        let decoder = try OpusAudioDecoder()
        XCTAssertThrowsError(try decoder.decode([])) { XCTAssertEqual(($0 as? PeerError)?.code, "invalidParameter") }
        // A TOC byte announcing code 3 with no frame count byte is invalid (RFC 6716 §3.2.5).
        XCTAssertThrowsError(try decoder.decode([0x03])) { XCTAssertEqual(($0 as? PeerError)?.code, "opus") }
        XCTAssertThrowsError(try OpusAudioEncoder(sampleRate: 44_100)) { XCTAssertEqual($0 as? PeerError, .opus(-1)) }
    }
}
