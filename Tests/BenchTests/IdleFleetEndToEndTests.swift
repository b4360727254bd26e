@testable import Bench
import Foundation
import XCTest

/// `bench signaling --idle-processes 2` against the real server binary: the idle devices
/// live in two `switchboard bench idle-fleet` children, the setups run in this process.
final class IdleFleetEndToEndTests: XCTestCase {
    /// A 2 s run (0.5 s warm-up) against `server`, idle children spawned from the built
    /// binary; each test sets its idle fleet and pairs.
    static func shortRun(against server: BenchServer) -> BenchmarkOptions {
        var options = BenchmarkOptions()
        options.url = server.url
        options.secret = "unused: the run gets the bytes"
        options.durationSeconds = 2
        options.warmupSeconds = 0.5
        options.connectRate = 400
        options.serverPID = server.process.processIdentifier
        options.idleChildExecutable = BenchServer.binary.path
        return options
    }

    func testIdleDevicesInTwoChildrenThenNoChildLeft() throws {
        let server = try BenchServer()
        var options = Self.shortRun(against: server)
        options.idle = 40
        options.idleProcesses = 2
        options.pairs = 2
        options.calleeDevices = 2
        // The libsoup pair client stays covered here (`--client soup`); the other runs use the default, lean.
        options.client = .soup
        let report = SignalingRun(options: options, secret: BenchServer.secret).run()

        XCTAssertEqual(report.idleProcesses, 2)
        XCTAssertEqual(report.idleConnected, 40, "notes: \(report.notes), errors: \(report.errors)")
        XCTAssertEqual(report.idleFailed, 0)
        XCTAssertEqual(report.idleDroppedDuringRun, 0)
        XCTAssertEqual(report.idleChildConnectSeconds.count, 2)
        XCTAssertTrue(report.idleChildConnectSeconds.allSatisfy { $0 != nil }, "both children settled")
        XCTAssertEqual(report.pairDevicesConnected, 2 * 3)
        XCTAssertGreaterThan(report.setupsCompleted, 0)
        XCTAssertEqual(report.errorCount, 0, "\(report.errors)")
        XCTAssertFalse(report.notes.contains { $0.contains("idle child") }, "every child exited 0 on stdin EOF: \(report.notes)")
        XCTAssertNotNil(report.idleChildrenCPUCores)
        XCTAssertTrue(report.text.contains("idle processes: 2"))
        XCTAssertEqual(idleFleetProcesses(), [], "no idle child survives the run")
    }

    /// Three pairs on three loops (`--pairs-per-loop 1`): every pair's setups complete with
    /// no error, and the merged figures count all three loops' setups and latencies.
    func testPairsOnSeveralLoopsCompleteSetups() throws {
        let server = try BenchServer()
        var options = Self.shortRun(against: server)
        options.idle = 10
        options.idleProcesses = 1
        options.pairs = 3
        options.pairsPerLoop = 1
        options.calleeDevices = 3
        let report = SignalingRun(options: options, secret: BenchServer.secret).run()

        XCTAssertEqual(report.pairLoops, 3)
        XCTAssertEqual(report.idleConnected, 10, "notes: \(report.notes)")
        XCTAssertEqual(report.pairDevicesConnected, 3 * 4)
        XCTAssertGreaterThan(report.setupsCompleted, 0)
        XCTAssertEqual(report.errorCount, 0, "\(report.errors)")
        let setup = report.latencies.first { $0.stage == Stage.setup.rawValue }?.latency
        XCTAssertEqual(setup?.count, report.setupsCompleted, "one complete-setup sample per counted setup")
        let incoming = report.latencies.first { $0.stage == Stage.inviteIncoming.rawValue }?.latency
        // Every counted setup rang 3 devices, except at most one per pair that started in the warm-up.
        XCTAssertGreaterThanOrEqual(incoming?.count ?? 0, 3 * (report.setupsCompleted - 3), "all 3 callee devices rang")
        XCTAssertNotNil(report.clientCPUMicrosecondsPerSetup)
        XCTAssertTrue(report.text.contains("on 3 loops"))
        // From the server's /metrics: every setup leaves its call, events and outbox rows.
        let perSetup = try XCTUnwrap(report.databaseBytesPerSetup, "notes: \(report.notes)")
        XCTAssertGreaterThan(perSetup, 500)
        XCTAssertLessThan(perSetup, 100_000)
        XCTAssertTrue(report.text.contains("database growth per setup:"))
        // The host ran at least this process's own CPU over the window, and no more than its cores.
        let host = try XCTUnwrap(report.hostCPUBusyCores)
        XCTAssertGreaterThanOrEqual(host, (report.clientCPUCores ?? 0) * 0.9)
        XCTAssertLessThanOrEqual(host, Double(report.cpus) * 1.05)
        XCTAssertTrue(report.text.contains("host CPU busy     :"))
        XCTAssertEqual(idleFleetProcesses(), [], "no idle child survives the run")
    }

    /// A child whose parent goes away without closing anything: the kernel closes the stdin
    /// pipe, the child sees EOF and exits (here: the parent's handle is dropped, which closes
    /// stdin; SIGKILL of a whole benchmark closes it the same way).
    func testChildExitsWhenItsStdinCloses() throws {
        let server = try BenchServer()
        let child = IdleChildProcess(index: 0, count: 5, offset: 1_000)
        // libsoup's client here (`--client soup`); the other children run the default, lean.
        try child.spawn(executable: BenchServer.binary.path, url: server.url, connectRate: 100, maxInFlight: 2, client: .soup,
                        secret: BenchServer.secret)
        let deadline = Date(timeIntervalSinceNow: 30)
        while child.status.latest?.settled != true, !child.status.outputClosed, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(child.status.latest?.connected, 5)
        XCTAssertNil(child.status.protocolError)
        XCTAssertEqual(idleFleetProcesses(), [child.pid])
        XCTAssertEqual(child.terminate(), "exit 0", "EOF on stdin alone ends the child")
        XCTAssertEqual(idleFleetProcesses(), [])
    }

    /// SIGKILL of the whole benchmark (no cleanup code runs): its children see EOF on the
    /// stdin pipe the kernel closed, and exit; none is left holding sockets.
    func testNoOrphanAfterTheBenchmarkIsKilled() throws {
        let server = try BenchServer()
        let secretFile = server.directory.appendingPathComponent("secret")
        try BenchServer.secretText.write(to: secretFile, atomically: true, encoding: .utf8)
        let bench = Process()
        bench.executableURL = BenchServer.binary
        bench.arguments = ["bench", "signaling", "--url", server.url, "--secret-file", secretFile.path, "--idle", "20",
                           "--idle-processes", "2", "--pairs", "1", "--duration", "60", "--server-pid",
                           "\(server.process.processIdentifier)"]
        bench.standardOutput = FileHandle.nullDevice
        try bench.run()
        var children: [Int32] = []
        let deadline = Date(timeIntervalSinceNow: 30)
        while children.count < 2, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            children = idleFleetProcesses(parent: bench.processIdentifier)
        }
        XCTAssertEqual(children.count, 2, "the benchmark started two idle children")
        kill(bench.processIdentifier, SIGKILL)
        bench.waitUntilExit()
        let gone = Date(timeIntervalSinceNow: 10)
        while !idleFleetProcesses(parent: nil, containing: server.url, zombies: false).isEmpty, Date() < gone {
            Thread.sleep(forTimeInterval: 0.05)
        }
        XCTAssertEqual(idleFleetProcesses(parent: nil, containing: server.url, zombies: false), [],
                       "no idle child outlives a killed benchmark")
    }
}
