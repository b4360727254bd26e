import Foundation
import XCTest

struct MissingExecutable: Error {
    var looked: [String]
}

/// Runs the `switchboard-fuzz` executable (normal build: no sanitizer) in replay mode over the
/// seed corpus in Tests/Fuzz/Corpus plus seeded mutations, as CI does. Mutation counts are
/// per target so the debug build stays well under a minute on two shared cores; the release
/// build (`scripts/fuzz.sh --replay`) runs 20 000 for every target.
final class FuzzReplayTests: XCTestCase {
    /// 20 000 per target, except where a debug-build input is slow: SDP (~7 ms: three parses
    /// and an answer), transport-cc (~0.5 ms: counts up to 65 535 packets), the router (a
    /// whole room per input). Measured here: 20 s of CPU with 1500/10000/10000, 82 s wall on
    /// two shared busy cores, hence these.
    static let mutationArguments = [
        "--mutations", "20000",
        "--mutations-for", "sdp=1000", "--mutations-for", "router=6000", "--mutations-for", "transport-cc=8000",
    ]

    func testEveryTargetSurvivesCorpusAndMutations() throws {
        let (status, output) = try runFuzz(Self.mutationArguments + ["all"])
        print(output)
        XCTAssertEqual(status, 0, output)
        for target in ["rtp", "rtcp", "transport-cc", "stun", "sdp", "signaling", "dtls-record", "router"] {
            XCTAssertTrue(output.contains("switchboard-fuzz: \(target): "), "no summary for \(target)")
        }
        XCTAssertFalse(output.contains("FAILED"), output)
    }

    /// The seeds must keep reaching the deep paths: an SFU answer, the ICE agent's success
    /// reply, forwarded RTP and accepted RTCP in the router, parsed transport-cc feedback.
    func testSeedsReachDeepPaths() throws {
        let (status, output) = try runFuzz(["--mutations", "0", "all"])
        XCTAssertEqual(status, 0, output)
        for step in ["sdp.answered", "stun.success-reply", "stun.error-reply", "router.forwarded-packets", "router.rtcp-accepted",
                     "transport-cc.parsed", "rtcp.parsed", "rtp.extension", "signaling.accepted", "dtls-record.well-formed"] {
            XCTAssertTrue(output.contains(" \(step)="), "no seed reaches \(step):\n\(output)")
        }
    }

    func testUnknownTargetIsAUsageError() throws {
        let (status, output) = try runFuzz(["no-such-target"])
        XCTAssertEqual(status, 2, output)
    }

    /// Runs the executable next to the test bundle with the repository's corpus.
    private func runFuzz(_ arguments: [String]) throws -> (Int32, String) {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let corpus = repository.appendingPathComponent("Tests/Fuzz/Corpus").path
        let artifacts = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: artifacts) }
        let process = Process()
        process.executableURL = try executable()
        process.arguments = ["--corpus", corpus, "--artifacts", artifacts.path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        guard process.terminationReason == .exit else {
            XCTFail("switchboard-fuzz crashed (signal \(process.terminationStatus)):\n\(output)")
            return (-1, output)
        }
        return (process.terminationStatus, output)
    }

    /// `switchboard-fuzz` is built into the same directory as the test bundle.
    private func executable() throws -> URL {
        var candidates: [URL] = []
        for bundle in Bundle.allBundles {
            candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("switchboard-fuzz"))
        }
        candidates.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("switchboard-fuzz"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            // The test target depends on the executable target, so it is always built: absent is a failure.
            throw MissingExecutable(looked: candidates.map(\.path))
        }
        return found
    }
}
