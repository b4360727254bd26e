import Foundation
import IO
import XCTest

/// Debian `chromium`, headless, with fake camera and microphone, driven over the Chrome
/// DevTools Protocol (https://chromedevtools.github.io/devtools-protocol/).
///
/// One browser per test; `page(url:)` opens tabs. `close()` (also run at deinit) kills the
/// browser and removes its profile directory.
final class Chromium: @unchecked Sendable {
    static let executable = "/usr/bin/chromium"
    let process: Process
    let profile: URL
    let devToolsPort: UInt16
    let loop: EventLoop
    private var pages: [ChromiumPage] = []

    /// Throws XCTSkip when Chromium is not installed (scripts/install-deps.sh installs it).
    init(loop: EventLoop, extraArguments: [String] = []) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            // In CI a missing browser/TURN server is a broken install step, not a reason to skip.
            if ProcessInfo.processInfo.environment["CI"] != nil { throw XCTSkip.ciMissing("chromium is not installed (apt-get install chromium, or run scripts/install-deps.sh)") }
            throw XCTSkip("chromium is not installed (apt-get install chromium, or run scripts/install-deps.sh)")
        }
        self.loop = loop
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("sb-chromium-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: profile, withIntermediateDirectories: true)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.executable)
        p.arguments = [
            "--headless=new", "--no-sandbox",
            "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
            // Without it headless Chromium gathers no loopback candidates (measured here).
            "--allow-loopback-in-peer-connection",
            "--remote-debugging-port=0", "--user-data-dir=\(profile.path)",
            "--no-first-run", "--no-default-browser-check", "--disable-gpu", "--mute-audio",
            "--disable-background-networking", "--disable-extensions", "--disable-sync",
            "--autoplay-policy=no-user-gesture-required",
            // Every tab is a background tab to the others: keep their timers and WebRTC at full speed.
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
            "about:blank",
        ] + extraArguments
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        // Diagnostics: SWITCHBOARD_CHROMIUM_LOG=<file> writes WebRTC's receive-path logging
        // there (SRTP unprotect failures, RtpDemuxer "Failed to demux", unsignaled SSRCs).
        if let path = ProcessInfo.processInfo.environment["SWITCHBOARD_CHROMIUM_LOG"], !path.isEmpty,
           FileManager.default.createFile(atPath: path, contents: nil), let log = FileHandle(forWritingAtPath: path) {
            p.arguments? += ["--enable-logging=stderr", "--v=0",
                             "--vmodule=*srtp*=2,*rtp_transport*=2,*rtp_demuxer*=2,*call*=1,*channel*=1,*webrtc_video_engine*=1"]
            p.standardError = log
        }
        try p.run()
        process = p
        // Chromium writes "<port>\n<browser ws path>" once DevTools listens. 20 s: a cold
        // start on a loaded 2-core CI box takes a few seconds.
        let file = profile.appendingPathComponent("DevToolsActivePort")
        let deadline = Date(timeIntervalSinceNow: 20)
        var port: UInt16?
        while Date() < deadline, p.isRunning {
            if let text = try? String(contentsOf: file, encoding: .utf8),
               let first = text.split(separator: "\n").first, let value = UInt16(first) {
                port = value
                break
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        guard let port else {
            p.terminate()
            try? FileManager.default.removeItem(at: profile)
            throw ChromiumError.startFailed("no DevToolsActivePort within 20 s (running: \(p.isRunning))")
        }
        devToolsPort = port
    }

    /// Opens a new tab on `url` and waits until its document has loaded.
    func page(url: String, timeout: Double = 15) throws -> ChromiumPage {
        let escaped = url.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&?=#"))) ?? url
        // PUT: Chromium refuses GET on /json/new since version 111.
        let response = try http("PUT", "/json/new?\(escaped)", timeout: timeout)
        guard let object = try JSONSerialization.jsonObject(with: response) as? [String: Any],
              let socketURL = object["webSocketDebuggerUrl"] as? String else {
            throw ChromiumError.protocolError("no webSocketDebuggerUrl in /json/new answer")
        }
        let page = try ChromiumPage(loop: loop, url: socketURL)
        pages.append(page)
        // A new tab starts on about:blank (already "complete"): wait for the real document.
        try page.waitUntil("location.href !== 'about:blank' && document.readyState === 'complete'", timeout: timeout)
        return page
    }

    private func http(_ method: String, _ path: String, timeout: Double) throws -> Data {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<HTTPClientResponse>()
        HTTPClient(loop: loop).send(method: method, url: "http://127.0.0.1:\(devToolsPort)\(path)",
                                    timeoutSeconds: UInt32(timeout)) { r in box.set(r.mapError { $0 as Error }); done.signal() }
        guard done.wait(timeout: .now() + timeout + 1) == .success, let result = box.value else {
            throw ChromiumError.timeout("\(method) \(path)")
        }
        let response = try result.get()
        guard response.status == 200 else { throw ChromiumError.protocolError("\(method) \(path): HTTP \(response.status)") }
        return response.body
    }

    /// Kills the browser (SIGTERM, then SIGKILL after 5 s) and removes the profile.
    func close() {
        for page in pages { page.close() }
        pages = []
        if process.isRunning {
            process.terminate()
            let deadline = Date(timeIntervalSinceNow: 5)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: profile)
    }

    deinit { close() }
}

enum ChromiumError: Error, CustomStringConvertible {
    case startFailed(String)
    case timeout(String)
    case protocolError(String)
    case javascript(String)

    var description: String {
        switch self {
        case .startFailed(let s): return "chromium did not start: \(s)"
        case .timeout(let s): return "timed out: \(s)"
        case .protocolError(let s): return "DevTools protocol: \(s)"
        case .javascript(let s): return "page threw: \(s)"
        }
    }
}

/// A value set on one thread and read on another.
final class ResultBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Result<T, Error>?
    var value: Result<T, Error>? { lock.lock(); defer { lock.unlock() }; return stored }
    func set(_ result: Result<T, Error>) { lock.lock(); stored = result; lock.unlock() }
}

/// Thrown instead of a skip when CI lacks a tool that scripts/install-deps.sh installs.
struct MissingTool: Error, CustomStringConvertible {
    let description: String
}

extension XCTSkip {
    static func ciMissing(_ message: String) -> MissingTool { MissingTool(description: message) }
}
