import XCTest
@testable import RTP
import SplitMix

/// `TransportFeedbackView` (the in-place reader the SFU consumes feedback with) against the
/// `TransportFeedback` model: same packets, same arrivals, same typed errors — on the draft's
/// examples and a Chrome capture, random feedback, every truncation and random bytes.
final class TransportFeedbackViewTests: XCTestCase {
    /// The view's packets, or its error.
    private func read(_ bytes: [UInt8]) -> Result<[TransportFeedback.PacketResult], TransportFeedbackError> {
        bytes.withUnsafeBytes { raw -> Result<[TransportFeedback.PacketResult], TransportFeedbackError> in
            do throws(TransportFeedbackError) {
                var view = try TransportFeedbackView(body: raw)
                var results: [TransportFeedback.PacketResult] = []
                while let result = view.next() { results.append(result) }
                XCTAssertNil(view.next(), "stays finished")
                XCTAssertEqual(results.count, view.packetStatusCount)
                return .success(results)
            } catch {
                return .failure(error)
            }
        }
    }

    /// The model's packets, or its error.
    private func model(_ bytes: [UInt8]) -> Result<[TransportFeedback.PacketResult], TransportFeedbackError> {
        do throws(TransportFeedbackError) { return .success(try TransportFeedback(body: bytes).packetResults) } catch { return .failure(error) }
    }

    func testAgreesWithTheModelOnKnownBodies() throws {
        let bodies: [[UInt8]] = [
            // Chrome capture: 2-bit vector and an over-long run (TransportFeedbackTests).
            [0xff, 0xfe, 0x00, 0x0a, 0x00, 0x00, 0x10, 0x07, 0xd8, 0x58, 0xc5, 0x00,
             0x04, 0xff, 0xf8, 0x64, 0xff, 0x01, 0x00, 0x01, 0x02],
            // Draft §3.1.4 example 1 (1-bit vector) and §3.1.3 example 1 (a run of 221 lost).
            [0, 7, 0, 14, 0, 0, 0, 0, 0x9F, 0x1C, 4, 8, 12, 16, 20, 24, 28, 32],
            [0, 100, 0, 221, 0, 0, 0, 0, 0x00, 0xDD],
            // Reserved symbol in a run and in a 2-bit vector.
            [0, 0, 0, 24, 0, 0, 0, 0, 0x60, 0x18],
            [0, 0, 0, 7, 0, 0, 0, 0, 0xCD, 0x50, 1, 2, 3],
            // An empty run before the real chunk, and a count of 0.
            [0, 5, 0, 2, 0, 0, 1, 0, 0x20, 0x00, 0x20, 0x02, 10, 20],
            [0, 1, 0, 0, 0, 0, 0, 0],
        ]
        for bytes in bodies {
            XCTAssertEqual(read(bytes), model(bytes), "\(bytes)")
        }
        let chrome = try read(bodies[0]).get()
        XCTAssertEqual(chrome.count, 10)
        XCTAssertEqual(chrome.first?.sequenceNumber, 0xFFFE)
    }

    func testAgreesWithTheModelOnRandomFeedbackAndEveryPrefix() throws {
        var rng = SplitMix64(seed: 21)
        for round in 0..<300 {
            let feedback = TransportFeedback.random(maxCount: 200, using: &rng)
            let bytes = try feedback.encodedBody()
            XCTAssertEqual(try read(bytes).get(), feedback.packetResults)
            XCTAssertEqual(try read(bytes + [0, 0, 0]).get(), feedback.packetResults, "zero padding ignored")
            if round < 30 {
                for length in 0..<bytes.count { XCTAssertEqual(read(Array(bytes.prefix(length))), .failure(.truncated), "prefix \(length)") }
            }
        }
    }

    func testRandomBytesAgreeWithTheModel() {
        var rng = SplitMix64(seed: 98)
        for _ in 0..<3000 {
            let bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in UInt8.random(in: 0 ... .max, using: &rng) }
            XCTAssertEqual(read(bytes), model(bytes))
        }
    }
}
