import Foundation

/// What a block of decoded audio contains: RMS level and the dominant frequency.
///
/// The frequency comes from a Goertzel scan (Goertzel 1958; one DFT bin per candidate
/// frequency, O(N) each) over 200–4000 Hz in 10 Hz steps on the last 100 ms, refined to 1 Hz
/// around the best coarse bin on the last 250 ms. RMS covers the whole block. That is plenty for telling peers apart (their tones are ≥ 50 Hz apart) and
/// for checking that Opus round-tripped the tone.
public struct ToneAnalysis: Sendable, Equatable {
    /// Root mean square of the samples, in 16-bit units.
    public var rms: Double
    /// Frequency (Hz) with the most energy in the scanned band.
    public var dominantFrequency: Double
    /// Share of the last 250 ms's energy in the dominant bin, 0…1 (a clean sine ≈ 1; noise ≪ 1).
    public var purity: Double
    public var sampleCount: Int

    /// 200–4000 Hz: the band the synthetic peers use (speech band, well inside Opus's
    /// fullband and away from its low-frequency high-pass).
    public static let scanRange: ClosedRange<Double> = 200...4000

    /// Analyses mono samples (pass one channel of interleaved audio via `mono(_:channels:)`).
    public init(samples: [Int16], sampleRate: Int) {
        sampleCount = samples.count
        guard !samples.isEmpty, sampleRate > 0 else {
            rms = 0; dominantFrequency = 0; purity = 0
            return
        }
        let x = samples.map(Double.init)
        let energy = x.reduce(0) { $0 + $1 * $1 }
        rms = (energy / Double(x.count)).squareRoot()
        // Coarse scan on the last 100 ms only: its DFT bins are 10 Hz wide, matching the 10 Hz
        // step, and it costs a tenth of scanning the whole window (report() runs this per stream).
        let coarse = Array(x.suffix(max(1, sampleRate / 10)))
        var best = (frequency: 0.0, power: -1.0)
        var f = Self.scanRange.lowerBound
        while f <= Self.scanRange.upperBound {
            let p = Self.goertzelPower(coarse, frequency: f, sampleRate: Double(sampleRate))
            if p > best.power { best = (f, p) }
            f += 10
        }
        // Fine scan (1 Hz steps) on the last 250 ms: the peak of a single tone's spectrum sits
        // at its frequency whatever the block length; a longer block only separates close
        // tones, which the coarse step already did.
        let block = Array(x.suffix(max(1, sampleRate / 4)))
        let blockEnergy = block.reduce(0) { $0 + $1 * $1 }
        var fine = (frequency: best.frequency, power: -1.0)
        var g = best.frequency - 10
        while g <= best.frequency + 10 {
            let p = Self.goertzelPower(block, frequency: g, sampleRate: Double(sampleRate))
            if p > fine.power { fine = (g, p) }
            g += 1
        }
        dominantFrequency = fine.frequency
        // |X(f)|² of a sine of amplitude A over N samples is (A·N/2)²; its energy is A²·N/2.
        // So the bin power × 2 / N over the total energy is the sine's share of the energy.
        purity = blockEnergy > 0 ? min(1, (2 * fine.power / Double(block.count)) / blockEnergy) : 0
    }

    /// The first channel of interleaved samples.
    public static func mono(_ interleaved: [Int16], channels: Int) -> [Int16] {
        guard channels > 1 else { return interleaved }
        return stride(from: 0, to: interleaved.count - channels + 1, by: channels).map { interleaved[$0] }
    }

    /// Power of the DFT at `frequency` (non-integer bins allowed), by the Goertzel recurrence.
    static func goertzelPower(_ x: [Double], frequency: Double, sampleRate: Double) -> Double {
        let w = 2 * Double.pi * frequency / sampleRate
        let coefficient = 2 * cos(w)
        var s1 = 0.0, s2 = 0.0
        x.withUnsafeBufferPointer { samples in
            for sample in samples {
                let s0 = sample + coefficient * s1 - s2
                s2 = s1
                s1 = s0
            }
        }
        return s1 * s1 + s2 * s2 - coefficient * s1 * s2
    }

    /// True when the audio is the tone at `expected` Hz: dominant frequency within `tolerance`
    /// (relative) and level above `minimumRMS`.
    public func matches(frequency expected: Double, tolerance: Double = 0.03, minimumRMS: Double = 500) -> Bool {
        rms >= minimumRMS && abs(dominantFrequency - expected) <= expected * tolerance
    }
}
