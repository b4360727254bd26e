import Foundation

/// A continuous sine tone cut into fixed-size frames of interleaved 16-bit PCM: the signal a
/// synthetic peer encodes. Each peer gets its own frequency so a receiver can tell whose audio
/// it decoded (see `ToneAnalysis`). Phase is carried across frames, so the concatenation is one
/// clean sine (no clicks that would smear the spectrum).
public struct ToneGenerator: Sendable {
    public let frequency: Double
    public let sampleRate: Int
    public let channels: Int
    /// Peak amplitude in 16-bit units.
    public let amplitude: Double
    private var phase: Double = 0

    /// 8000 (≈ −12 dBFS): loud enough that Opus codes it as a clean tone, far from clipping.
    public static let defaultAmplitude = 8000.0

    public init(frequency: Double, sampleRate: Int = 48_000, channels: Int = 2,
                amplitude: Double = ToneGenerator.defaultAmplitude) throws(PeerError) {
        guard frequency > 0, frequency < Double(sampleRate) / 2 else {
            throw .invalidParameter("frequency \(frequency) outside (0, Nyquist)")
        }
        guard (1...2).contains(channels), sampleRate > 0 else { throw .invalidParameter("channels/sampleRate") }
        guard amplitude > 0, amplitude <= 32767 else { throw .invalidParameter("amplitude") }
        self.frequency = frequency
        self.sampleRate = sampleRate
        self.channels = channels
        self.amplitude = amplitude
    }

    /// The next `samplesPerChannel` samples, interleaved.
    public mutating func nextFrame(samplesPerChannel: Int) -> [Int16] {
        var frame = [Int16](repeating: 0, count: samplesPerChannel * channels)
        let step = 2 * Double.pi * frequency / Double(sampleRate)
        for i in 0..<samplesPerChannel {
            let value = Int16((amplitude * sin(phase)).rounded())
            for c in 0..<channels { frame[i * channels + c] = value }
            phase += step
            if phase > 2 * Double.pi { phase -= 2 * Double.pi }
        }
        return frame
    }
}
